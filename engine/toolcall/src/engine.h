// engine.h — the parts every family's parser is built from (internal).
//
// A family's parser is a `machine` stepping over the text received so far (`context::buf`): text
// before `context::pos` is decided. Most families are a `tagged_machine`: reasoning at the start,
// then content scanned for trigger markers, each trigger starting a `call_block` that reads one
// call region (one or several calls) and reports more / done / fail. Everything decided goes to the
// `sink`, which turns it into deltas and the message. A machine never looks at how the text was
// split into pieces, so every split gives the same deltas in total.
#pragma once

#include "literal-parser.h"
#include "text-util.h"

#include "toolcall/toolcall.h"

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace toolcall::detail {

// Parameter schemas of the request's tools.
class tool_schemas {
public:
    explicit tool_schemas(const nlohmann::ordered_json & tools);
    // Whether the schema says the parameter is a string (its raw text is the value); false for
    // other types and for unknown tools or parameters (the raw text is read as a literal first).
    bool is_string(std::string_view tool, std::string_view param) const;

private:
    std::map<std::string, nlohmann::ordered_json, std::less<>> properties_;
};

// Collects what the parser decided: deltas for the stream, and the message they add up to.
class sink {
public:
    explicit sink(uint64_t id_seed);
    void content(std::string_view text);
    void reasoning(std::string_view text);
    void call_begin(std::string id, std::string name);  // id "": generated
    void call_args(std::string_view json_text);
    void call_end();  // parses the arguments text into the message
    bool in_call() const { return in_call_; }
    void finish();    // end of output: pending UTF-8 flushed, a call still open ended
    std::vector<delta> take();
    const message & result() const { return msg_; }

private:
    // Content or reasoning: whitespace at either end of the whole text is never emitted.
    struct text_channel {
        utf8_assembler utf8;
        std::string pending_space;
        bool started = false;
        std::string push(std::string_view text);
    };
    void emit_text(delta::kind k, const std::string & text);
    std::string generate_id();

    text_channel content_;
    text_channel reasoning_;
    utf8_assembler args_utf8_;
    std::string args_text_;
    bool in_call_ = false;
    std::vector<delta> deltas_;
    message msg_;
    std::mt19937_64 rng_;
};

struct context {
    explicit context(const parse_options & opts) : reasoning_open(opts.reasoning_open), schemas(opts.tools), out(opts.id_seed) {}
    std::string buf;    // everything received
    size_t pos = 0;     // text before it is decided
    bool at_end = false;
    bool reasoning_open = false;
    tool_schemas schemas;
    sink out;
};

enum class progress : uint8_t { more, done, fail };
enum class match : uint8_t { yes, no, more };

// The first position at or after cur that is not whitespace (buf.size() when none yet).
size_t skip_space(const context & ctx, size_t cur);
// Whether buf has `lit` at cur (more: buf ends inside it and the input has not ended); advances
// cur past it on yes.
match match_literal(const context & ctx, size_t & cur, std::string_view lit);
// Like match_literal after whitespace; cur moves (past the whitespace and lit) only on yes.
match match_after_space(const context & ctx, size_t & cur, std::string_view lit);
// The text from cur up to the first of `delims` (at most max_len bytes: no when longer); on yes
// `which` says which delimiter and cur is past it (at it with keep_delim).
match read_until(const context & ctx, size_t & cur, const std::vector<std::string> & delims, std::string & text,
                 size_t & which, size_t max_len = 256, bool keep_delim = false);
// A function name as formats write it: no whitespace or markup characters, at most 256 bytes.
bool valid_name(std::string_view name);

// Reads one call region that started with a trigger marker.
class call_block {
public:
    virtual ~call_block() = default;
    // Reads from cur on; more: wait for input (at the end of the input: the text was cut).
    virtual progress step(context & ctx, size_t & cur) = 0;
    // Whether a call of this block reached the sink (a failure can no longer be taken back).
    virtual bool committed() const = 0;
    // After a failure of a committed block: ends the open call (arguments closed into valid
    // JSON) and returns where content resumes.
    virtual size_t abort(context & ctx, size_t cur) = 0;
};

// A call whose name is known but which reaches the sink only once its body has begun the way the
// format says (commit), so that a body that is wrong from its first byte leaves no call behind.
class pending_call {
public:
    void open(std::string id, std::string name);
    void args(context & ctx, std::string_view json_text);  // held until commit
    void commit(context & ctx);
    void end(context & ctx);  // commits (a complete call is a call) and ends it
    // Ends a call cut short: what the reader (args_reader, literal_parser) has read so far,
    // closed into valid JSON, then end().
    template <class Reader>
    void close_cut(context & ctx, Reader & reader) {
        std::string tail;
        reader.repair(tail);
        args(ctx, tail);
        end(ctx);
    }
    void drop() { active_ = begun_ = false; }
    bool active() const { return active_; }
    bool begun() const { return begun_; }

private:
    std::string id_;
    std::string name_;
    std::string held_;
    bool active_ = false;
    bool begun_ = false;
};

class machine {
public:
    virtual ~machine() = default;
    // Decides what it can; false when it waits for more input (or, at the end, has finished).
    virtual bool step(context & ctx) = 0;
};

struct reasoning_style {
    std::string open;
    std::string close;
};

// The reasoning blocks a family's output may start with (<think>…</think> for most).
std::vector<reasoning_style> family_reasoning(family f);

struct trigger {
    std::string marker;
    int kind = -1;      // < 0: the marker is dropped from content; else the block to start
    bool keep = false;  // the block reads the marker itself (it is the start of a JSON value)
};

class tagged_machine : public machine {
public:
    struct spec {
        std::vector<reasoning_style> reasoning;
        bool implicit_reasoning = false;      // text before a closing marker with no opening one is reasoning
        std::vector<trigger> triggers;        // anywhere in content
        std::vector<trigger> start_triggers;  // only where content starts (after whitespace)
    };
    using block_factory = std::function<std::unique_ptr<call_block>(int kind)>;

    tagged_machine(spec s, block_factory make_block);
    bool step(context & ctx) override;

private:
    enum class state : uint8_t { start, reasoning, implicit, content_start, content, block };
    bool step_start(context & ctx);
    bool step_reasoning(context & ctx);
    bool step_implicit(context & ctx);
    bool step_content_start(context & ctx);
    bool step_content(context & ctx);
    bool step_block(context & ctx);
    void start_block(context & ctx, const trigger & t, size_t at);
    marker_hit find_trigger(const context & ctx);

    spec spec_;
    block_factory make_block_;
    std::vector<std::string> markers_;  // of spec_.triggers
    std::vector<size_t> next_;          // per marker: its next occurrence (npos: none before searched_)
    std::vector<size_t> searched_;
    state state_ = state::start;
    size_t style_ = 0;
    std::unique_ptr<call_block> block_;
    size_t block_start_ = 0;
    size_t marker_len_ = 0;
    size_t cur_ = 0;
    size_t implicit_scanned_ = 0;  // no marker of step_implicit starts before this
};

// ---- shared call blocks (json-call.cpp) ----

struct json_call_keys {
    std::vector<std::string> name = {"name"};
    std::vector<std::string> args = {"arguments", "parameters"};
    std::vector<std::string> id = {"id"};
    bool require_args = false;    // an object without arguments is not a call (llama3: plain JSON is content)
    bool hold_until_end = false;  // the id may follow the arguments: emit the call when the object closes
};

// Streams one arguments value: an object (JSON or Python literal), or a JSON string holding one.
class args_reader {
public:
    explicit args_reader(literal_parser::config c = {}) : object_(with_object_only(c)) {}
    // out: JSON text of the object so far.
    progress step(context & ctx, size_t & cur, std::string & out);
    void repair(std::string & out);
    bool started() const { return form_ != 0; }

private:
    static literal_parser::config with_object_only(literal_parser::config c) {
        c.object_only = true;
        return c;
    }
    literal_parser object_;
    literal_parser string_;
    std::string string_json_;
    int form_ = 0;  // 0 undecided, 1 object, 2 JSON string
};

struct json_block_spec {
    struct literal {
        std::string text;
        bool optional = false;
    };
    std::vector<literal> before;  // after the trigger, whitespace allowed before each
    bool array = false;           // [call, call, …] rather than one call object
    json_call_keys keys;
    std::string after;            // the closing marker (consumed when present)
};

std::unique_ptr<call_block> make_json_block(const json_block_spec & spec);
std::unique_ptr<call_block> make_json_call_array(const json_call_keys & keys);
// The whole output as JSON: {"tool_calls": [...]}, {"tool_call": {...}}, {"response": "..."},
// a call object or an array of them; emitted once the value is complete.
std::unique_ptr<call_block> make_generic_json_block();

// ---- family machines ----

std::unique_ptr<machine> make_json_family(family f);    // families-json.cpp
std::unique_ptr<machine> make_token_family(family f);   // families-tokens.cpp
std::unique_ptr<machine> make_xml_family(family f);     // xml-call.cpp
std::unique_ptr<machine> make_call_syntax_family(family f);  // families-call-syntax.cpp
std::unique_ptr<machine> make_harmony_machine();        // harmony.cpp
std::unique_ptr<machine> make_machine(family f);        // registry.cpp

}  // namespace toolcall::detail
