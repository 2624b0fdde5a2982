// json-call.cpp — calls written as JSON: an arguments value, a call object ({"name", "arguments"}
// under the family's key names), an array of them, and a call region wrapped in markers.
#include "engine.h"

#include <algorithm>

namespace toolcall::detail {

namespace {

bool is_one_of(const std::string & key, const std::vector<std::string> & keys) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// A JSON text → the string it is (or a number's text, for ids); false for other values.
bool json_text_to_string(const std::string & text, std::string & out, bool allow_number) {
    auto j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (j.is_string()) {
        out = j.get<std::string>();
        return true;
    }
    if (allow_number && j.is_number()) {
        out = j.dump();
        return true;
    }
    return false;
}

}  // namespace

// ---- args_reader ----

progress args_reader::step(context & ctx, size_t & cur, std::string & out) {
    if (form_ == 0) {
        cur = skip_space(ctx, cur);
        if (cur == ctx.buf.size()) return progress::more;
        char c = ctx.buf[cur];
        if (c == '"') {
            form_ = 2;
        } else if (c == '{') {
            form_ = 1;
        } else {
            return progress::fail;
        }
    }
    std::string_view rest = std::string_view(ctx.buf).substr(cur);
    if (form_ == 1) {
        cur += object_.feed(rest, out);
        if (object_.state() == literal_parser::status::more) return progress::more;
        return object_.state() == literal_parser::status::done ? progress::done : progress::fail;
    }
    cur += string_.feed(rest, string_json_);
    if (string_.state() == literal_parser::status::more) return progress::more;
    std::string inner;
    if (string_.state() != literal_parser::status::done || !json_text_to_string(string_json_, inner, false)) {
        return progress::fail;
    }
    literal_parser p({.object_only = true});
    std::string converted;
    size_t used = p.feed(inner, converted);
    if (p.state() != literal_parser::status::done || !trim(std::string_view(inner).substr(used)).empty()) {
        return progress::fail;
    }
    out += converted;
    return progress::done;
}

void args_reader::repair(std::string & out) {
    if (form_ == 1) {
        object_.repair(out);
    } else {
        out += "{}";
    }
}

// ---- one call object ----

namespace {

class json_call_object : public call_block {
public:
    explicit json_call_object(const json_call_keys & keys) : keys_(keys) {}

    progress step(context & ctx, size_t & cur) override {
        for (;;) {
            progress p = step_once(ctx, cur);
            if (p != progress::done || st_ == st::closed) return p;
        }
    }
    bool committed() const override { return committed_; }
    size_t abort(context & ctx, size_t cur) override {
        if (!committed_) return cur;
        std::string tail;
        if (args_started_ && !args_done_) args_.repair(tail);
        ctx.out.call_args(tail);
        ctx.out.call_end();
        return cur;
    }

private:
    enum class st : uint8_t { open, key, colon, value, after, closed };
    enum class slot : uint8_t { name, id, args, other };

    // One state's worth; done: go on with the next state.
    progress step_once(context & ctx, size_t & cur) {
        if (st_ == st::value) return step_value(ctx, cur);
        if (st_ == st::key && key_.started()) return step_key(ctx, cur);
        cur = skip_space(ctx, cur);
        if (cur == ctx.buf.size()) return progress::more;
        char c = ctx.buf[cur];
        switch (st_) {
            case st::open:
                if (c != '{') return progress::fail;
                ++cur;
                st_ = st::key;
                return progress::done;
            case st::key:
                if (c == '}') return close(ctx, cur);
                return step_key(ctx, cur);
            case st::colon:
                if (c != ':') return progress::fail;
                ++cur;
                st_ = st::value;
                return progress::done;
            case st::after:
                if (c == '}') return close(ctx, cur);
                if (c != ',') return progress::fail;
                ++cur;
                key_ = literal_parser();
                key_json_.clear();
                st_ = st::key;
                return progress::done;
            default: return progress::fail;
        }
    }

    progress step_key(context & ctx, size_t & cur) {
        cur += key_.feed(std::string_view(ctx.buf).substr(cur), key_json_);
        if (key_.state() == literal_parser::status::more) return progress::more;
        std::string key;
        if (key_.state() != literal_parser::status::done || !json_text_to_string(key_json_, key, false)) {
            return progress::fail;
        }
        slot_ = slot::other;
        if (is_one_of(key, keys_.name) && !have_name_) slot_ = slot::name;
        if (is_one_of(key, keys_.id) && id_.empty()) slot_ = slot::id;
        if (is_one_of(key, keys_.args) && !args_started_) slot_ = slot::args;
        value_ = literal_parser();
        value_json_.clear();
        st_ = st::colon;
        return progress::done;
    }

    progress step_value(context & ctx, size_t & cur) {
        if (slot_ == slot::args) {
            std::string out;
            progress p = args_.step(ctx, cur, out);
            args_started_ = args_.started();
            (committed_ ? ctx.out.call_args(out) : void(pending_args_ += out));
            maybe_commit(ctx);  // before the failure check: where the call goes out depends on the text only
            if (p == progress::fail) return p;
            if (p == progress::more) return p;
            args_done_ = true;
            st_ = st::after;
            return progress::done;
        }
        cur += value_.feed(std::string_view(ctx.buf).substr(cur), value_json_);
        if (value_.state() == literal_parser::status::more) return progress::more;
        if (value_.state() == literal_parser::status::error) return progress::fail;
        if (slot_ == slot::name) {
            if (!json_text_to_string(value_json_, name_, false) || !valid_name(name_)) return progress::fail;
            have_name_ = true;
            maybe_commit(ctx);
        } else if (slot_ == slot::id) {
            json_text_to_string(value_json_, id_, true);
        }
        st_ = st::after;
        return progress::done;
    }

    void maybe_commit(context & ctx) {
        if (committed_ || !have_name_ || !args_started_ || keys_.hold_until_end) return;
        committed_ = true;
        ctx.out.call_begin(id_, name_);
        ctx.out.call_args(pending_args_);
        pending_args_.clear();
    }

    progress close(context & ctx, size_t & cur) {
        if (!have_name_ || (keys_.require_args && !args_done_)) return progress::fail;
        ++cur;
        if (!committed_) {
            committed_ = true;
            ctx.out.call_begin(id_, name_);
            ctx.out.call_args(args_done_ ? pending_args_ : std::string("{}"));
        }
        ctx.out.call_end();
        st_ = st::closed;
        return progress::done;
    }

    json_call_keys keys_;
    st st_ = st::open;
    slot slot_ = slot::other;
    literal_parser key_;
    std::string key_json_;
    literal_parser value_;
    std::string value_json_;
    args_reader args_;
    std::string pending_args_;
    std::string name_;
    std::string id_;
    bool have_name_ = false;
    bool args_started_ = false;
    bool args_done_ = false;
    bool committed_ = false;
};

// ---- [call, call, …] ----

class json_call_array : public call_block {
public:
    explicit json_call_array(const json_call_keys & keys) : keys_(keys) {}

    progress step(context & ctx, size_t & cur) override {
        for (;;) {
            if (st_ == st::element) {
                progress p = object_->step(ctx, cur);
                if (p != progress::done) return p;
                ++calls_;
                object_.reset();
                st_ = st::after;
                continue;
            }
            cur = skip_space(ctx, cur);
            if (cur == ctx.buf.size()) return progress::more;
            char c = ctx.buf[cur];
            if (st_ == st::open) {
                if (c != '[') return progress::fail;
                ++cur;
                st_ = st::before;
            } else if (c == ']') {  // also [] and a trailing comma
                ++cur;
                return progress::done;
            } else if (st_ == st::before && c == '{') {
                object_ = std::make_unique<json_call_object>(keys_);
                element_start_ = cur;
                st_ = st::element;
            } else if (st_ == st::after && c == ',') {
                ++cur;
                st_ = st::before;
            } else {
                return progress::fail;
            }
        }
    }
    bool committed() const override { return calls_ > 0 || (object_ && object_->committed()); }
    size_t abort(context & ctx, size_t cur) override {
        if (object_ && object_->committed()) return object_->abort(ctx, cur);
        return object_ ? element_start_ : cur;
    }

private:
    enum class st : uint8_t { open, before, element, after };
    json_call_keys keys_;
    st st_ = st::open;
    std::unique_ptr<json_call_object> object_;
    size_t element_start_ = 0;
    int calls_ = 0;
};

// ---- marker, literals, JSON, closing marker ----

class json_wrapped_block : public call_block {
public:
    explicit json_wrapped_block(const json_block_spec & spec) : spec_(spec) {}

    progress step(context & ctx, size_t & cur) override {
        while (stage_ < spec_.before.size()) {
            const auto & lit = spec_.before[stage_];
            match m = match_after_space(ctx, cur, lit.text);
            if (m == match::more) return progress::more;
            if (m == match::no && !lit.optional) return progress::fail;
            ++stage_;
        }
        if (!inner_) {
            inner_ = spec_.array ? make_json_call_array(spec_.keys)
                                 : std::unique_ptr<call_block>(std::make_unique<json_call_object>(spec_.keys));
        }
        if (!inner_done_) {
            progress p = inner_->step(ctx, cur);
            if (p != progress::done) return p;
            inner_done_ = true;
        }
        if (spec_.after.empty()) return progress::done;
        match m = match_after_space(ctx, cur, spec_.after);  // a missing closing marker is forgiven
        return m == match::more ? progress::more : progress::done;
    }
    bool committed() const override { return inner_ && inner_->committed(); }
    size_t abort(context & ctx, size_t cur) override { return inner_ ? inner_->abort(ctx, cur) : cur; }

private:
    json_block_spec spec_;
    size_t stage_ = 0;
    std::unique_ptr<call_block> inner_;
    bool inner_done_ = false;
};

// ---- the generic JSON reply ----

class generic_json_block : public call_block {
public:
    progress step(context & ctx, size_t & cur) override {
        cur += value_.feed(std::string_view(ctx.buf).substr(cur), json_);
        if (value_.state() == literal_parser::status::more && ctx.at_end) value_.finish(json_);
        if (value_.state() == literal_parser::status::more) return progress::more;
        if (value_.state() == literal_parser::status::error) return progress::fail;
        auto j = nlohmann::ordered_json::parse(json_, nullptr, false);
        std::vector<nlohmann::ordered_json> calls;
        std::string response;
        if (!interpret(j, calls, response)) return progress::fail;
        ctx.out.content(response);
        for (const auto & c : calls) {
            ctx.out.call_begin(c["id"].get<std::string>(), c["name"].get<std::string>());
            ctx.out.call_args(c["arguments"].dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
            ctx.out.call_end();
        }
        return progress::done;
    }
    bool committed() const override { return false; }
    size_t abort(context &, size_t cur) override { return cur; }

private:
    // {"name", "arguments" | "parameters", "id"?} (or under "function") → {id, name, arguments}.
    static bool to_call(const nlohmann::ordered_json & c, std::vector<nlohmann::ordered_json> & calls) {
        if (!c.is_object()) return false;
        const auto & f = c.contains("function") && c["function"].is_object() ? c["function"] : c;
        if (!f.contains("name") || !f["name"].is_string() || !valid_name(f["name"].get<std::string>())) return false;
        nlohmann::ordered_json args = nlohmann::ordered_json::object();
        for (const char * k : {"arguments", "parameters"}) {
            if (!f.contains(k)) continue;
            args = f[k];
            if (args.is_string()) args = nlohmann::ordered_json::parse(args.get<std::string>(), nullptr, false);
            if (!args.is_object()) return false;
            break;
        }
        std::string id = c.contains("id") && c["id"].is_string() ? c["id"].get<std::string>() : "";
        calls.push_back({{"id", id}, {"name", f["name"]}, {"arguments", args}});
        return true;
    }

    static bool interpret(const nlohmann::ordered_json & j, std::vector<nlohmann::ordered_json> & calls,
                          std::string & response) {
        if (j.is_array()) {
            for (const auto & c : j) {
                if (!to_call(c, calls)) return false;
            }
            return !calls.empty();
        }
        if (!j.is_object()) return false;
        if (j.contains("tool_calls") && j["tool_calls"].is_array()) return interpret(j["tool_calls"], calls, response);
        if (j.contains("tool_call")) return to_call(j["tool_call"], calls);
        if (j.contains("response") && j["response"].is_string()) {
            response = j["response"].get<std::string>();
            return true;
        }
        return to_call(j, calls);
    }

    literal_parser value_;
    std::string json_;
};

}  // namespace

std::unique_ptr<call_block> make_json_block(const json_block_spec & spec) {
    return std::make_unique<json_wrapped_block>(spec);
}

std::unique_ptr<call_block> make_json_call_array(const json_call_keys & keys) {
    return std::make_unique<json_call_array>(keys);
}

std::unique_ptr<call_block> make_generic_json_block() { return std::make_unique<generic_json_block>(); }

}  // namespace toolcall::detail
