// families-json.cpp — families whose calls are JSON objects between markers: hermes, apriel,
// nemotron-toolcall, firefunction, command-r7b, command-r-plus, gigachat, llama3-json, mistral,
// generic, none.
#include "engine.h"

namespace toolcall::detail {

namespace {

// [TOOL_CALLS] followed by a JSON array of calls (Mistral Nemo: the id follows the arguments), or
// by name[ARGS]{...} / name[CALL_ID]id[ARGS]{...} (Devstral, Magistral, Mistral Small 3.2).
class mistral_block : public call_block {
public:
    progress step(context & ctx, size_t & cur) override {
        if (st_ == st::start) {
            cur = skip_space(ctx, cur);
            if (cur == ctx.buf.size()) return progress::more;
            if (ctx.buf[cur] == '[') {
                json_call_keys keys;
                keys.hold_until_end = true;
                array_ = make_json_call_array(keys);
                st_ = st::array;
            } else {
                st_ = st::name;
            }
        }
        if (st_ == st::array) return array_->step(ctx, cur);
        if (st_ == st::name || st_ == st::id) {
            std::string text;
            size_t which = 0;
            const std::vector<std::string> delims = st_ == st::name ? std::vector<std::string>{"[ARGS]", "[CALL_ID]"}
                                                                    : std::vector<std::string>{"[ARGS]"};
            match m = read_until(ctx, cur, delims, text, which);
            if (m != match::yes) return m == match::more ? progress::more : progress::fail;
            std::string_view t = trim(text);
            if (st_ == st::name) {
                if (!valid_name(t)) return progress::fail;
                name_ = t;
            } else {
                id_ = t;
            }
            if (st_ == st::name && which == 1) {
                st_ = st::id;
                return step(ctx, cur);
            }
            call_.open(id_, name_);
            st_ = st::args;
        }
        std::string out;
        progress p = args_.step(ctx, cur, out);  // the call goes out once its arguments begin well
        call_.args(ctx, out);
        if (args_.started()) call_.commit(ctx);
        if (p == progress::done) call_.end(ctx);
        return p;
    }
    bool committed() const override { return call_.begun() || (array_ && array_->committed()); }
    size_t abort(context & ctx, size_t cur) override {
        if (array_) return array_->abort(ctx, cur);
        call_.close_cut(ctx, args_);
        return cur;
    }

private:
    enum class st : uint8_t { start, array, name, id, args };
    st st_ = st::start;
    std::unique_ptr<call_block> array_;
    args_reader args_;
    pending_call call_;
    std::string name_;
    std::string id_;
};

std::unique_ptr<machine> wrapped(std::vector<reasoning_style> reasoning, std::vector<trigger> triggers,
                                 std::vector<json_block_spec> blocks, std::vector<trigger> start_triggers = {}) {
    tagged_machine::spec s;
    s.reasoning = std::move(reasoning);
    s.triggers = std::move(triggers);
    s.start_triggers = std::move(start_triggers);
    return std::make_unique<tagged_machine>(std::move(s), [blocks = std::move(blocks)](int kind) {
        return make_json_block(blocks[static_cast<size_t>(kind)]);
    });
}

json_block_spec array_between(std::string after, json_call_keys keys = {}) {
    json_block_spec b;
    b.array = true;
    b.after = std::move(after);
    b.keys = std::move(keys);
    return b;
}

std::unique_ptr<machine> make_command_r7b() {
    tagged_machine::spec s;
    s.reasoning = family_reasoning(family::command_r7b);
    s.implicit_reasoning = true;
    s.triggers = {{"<|START_ACTION|>", 0}, {"<|START_RESPONSE|>"}, {"<|END_RESPONSE|>"}};
    json_call_keys keys;
    keys.name = {"tool_name", "name"};
    keys.args = {"parameters", "arguments"};
    keys.id = {"tool_call_id", "id"};
    json_block_spec b = array_between("<|END_ACTION|>", keys);
    return std::make_unique<tagged_machine>(std::move(s), [b](int) { return make_json_block(b); });
}

std::unique_ptr<machine> make_command_r_plus() {
    json_call_keys keys;
    keys.name = {"tool_name", "name"};
    keys.args = {"parameters", "arguments"};
    json_block_spec b = array_between("```", keys);
    b.before = {{"```", true}, {"json", true}};
    return wrapped(family_reasoning(family::command_r_plus), {{"Action:", 0}}, {b});
}

std::unique_ptr<machine> make_gigachat() {
    json_block_spec after_separator;
    after_separator.before = {{"function call", false}, {"<|role_sep|>", false}};
    json_block_spec after_role;
    return wrapped(family_reasoning(family::gigachat), {{"<|message_sep|>", 0}, {"function call<|role_sep|>", 1}},
                   {after_separator, after_role});
}

std::unique_ptr<machine> make_llama3_json() {
    json_block_spec b;
    b.keys.require_args = true;
    return wrapped(family_reasoning(family::llama3_json), {}, {b, b},
                   {{"{", 0, true}, {"<|python_tag|>", 1}});
}

std::unique_ptr<machine> make_mistral() {
    tagged_machine::spec s;
    s.reasoning = family_reasoning(family::mistral);
    s.triggers = {{"[TOOL_CALLS]", 0}};
    return std::make_unique<tagged_machine>(std::move(s), [](int) { return std::make_unique<mistral_block>(); });
}

std::unique_ptr<machine> make_generic() {
    tagged_machine::spec s;
    s.reasoning = family_reasoning(family::generic);
    s.start_triggers = {{"{", 0, true}, {"[", 0, true}};
    return std::make_unique<tagged_machine>(std::move(s), [](int) { return make_generic_json_block(); });
}

}  // namespace

std::unique_ptr<machine> make_json_family(family f) {
    switch (f) {
        case family::hermes: {
            json_block_spec b;
            b.after = "</tool_call>";
            return wrapped(family_reasoning(f), {{"<tool_call>", 0}}, {b});
        }
        case family::apriel: return wrapped(family_reasoning(f), {{"<tool_calls>", 0}}, {array_between("</tool_calls>")});
        case family::nemotron_toolcall:
            return wrapped(family_reasoning(f), {{"<TOOLCALL>", 0}}, {array_between("</TOOLCALL>")});
        case family::firefunction: return wrapped(family_reasoning(f), {{"functools", 0}}, {array_between("")});
        case family::command_r7b: return make_command_r7b();
        case family::command_r_plus: return make_command_r_plus();
        case family::gigachat: return make_gigachat();
        case family::llama3_json: return make_llama3_json();
        case family::mistral: return make_mistral();
        case family::generic: return make_generic();
        case family::none: return wrapped(family_reasoning(f), {}, {});
        default: return nullptr;
    }
}

}  // namespace toolcall::detail
