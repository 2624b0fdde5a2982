// families-call-syntax.cpp — families that write a call as a function call expression:
// lfm-pythonic ([get_weather(location='Paris'), …]) and gemma4 (call:get_weather{location:<|"|>Paris<|"|>}).
#include "engine.h"

namespace toolcall::detail {

namespace {

bool identifier(std::string_view s) {
    if (s.empty() || s.size() > 256) return false;
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  static_cast<unsigned char>(c) >= 0x80;
        if (!ok) return false;
    }
    return true;
}

// <|tool_call_start|>[name(key=value, …), …]<|tool_call_end|>, values as Python literals.
class pythonic_block : public call_block {
public:
    progress step(context & ctx, size_t & cur) override {
        for (;;) {
            progress p = step_once(ctx, cur);
            if (p != progress::done || st_ == st::finished) return p;
        }
    }
    bool committed() const override { return calls_ > 0 || call_.begun(); }
    size_t abort(context & ctx, size_t cur) override {
        if (!call_.begun()) return call_.active() ? call_start_ : cur;  // that call's text is content
        if (st_ == st::value) {
            std::string tail;
            value_.repair(tail);
            call_.args(ctx, tail);
        }
        end_call(ctx);
        return cur;
    }

private:
    enum class st : uint8_t { open, name, arg, value, after_value, after_call, close, finished };

    progress step_once(context & ctx, size_t & cur) {
        if (st_ == st::name || st_ == st::arg) {
            size_t c = skip_space(ctx, cur);
            if (c == ctx.buf.size()) return progress::more;
            if (st_ == st::arg && ctx.buf[c] == ')') {
                cur = c + 1;
                end_call(ctx);
                return progress::done;
            }
            return st_ == st::name ? step_name(ctx, cur) : step_key(ctx, cur);
        }
        if (st_ == st::value) return step_value(ctx, cur);
        if (st_ == st::close) {
            match m = match_after_space(ctx, cur, "<|tool_call_end|>");
            if (m == match::more) return progress::more;
            st_ = st::finished;
            return progress::done;
        }
        size_t c = skip_space(ctx, cur);
        if (c == ctx.buf.size()) {
            if (!ctx.at_end || st_ != st::after_call) return progress::more;
            st_ = st::finished;
            return progress::done;
        }
        char ch = ctx.buf[c];
        if (st_ == st::open) {
            bracket_ = ch == '[';
            cur = bracket_ ? c + 1 : c;
            call_start_ = cur;
            st_ = st::name;
        } else if (st_ == st::after_value && (ch == ',' || ch == ')')) {
            cur = c + 1;
            if (ch == ',') {
                st_ = st::arg;
            } else {
                end_call(ctx);
            }
        } else if (st_ == st::after_call && ch == ',') {
            cur = c + 1;
            call_start_ = cur;
            st_ = st::name;
        } else if (st_ == st::after_call) {  // "]" or the end of an unbracketed call list
            if (bracket_ && ch == ']') cur = c + 1;
            st_ = st::close;
        } else {
            return progress::fail;
        }
        return progress::done;
    }

    progress step_name(context & ctx, size_t & cur) {
        std::string text;
        size_t which = 0;
        match m = read_until(ctx, cur, {"("}, text, which);
        if (m != match::yes) return m == match::more ? progress::more : progress::fail;
        std::string name(trim(text));
        if (!valid_name(name) || name.find_first_of(",)=") != std::string::npos) return progress::fail;
        call_.open("", name);  // it goes out once a value begins well, or at its ")"
        call_.args(ctx, "{");
        first_arg_ = true;
        st_ = st::arg;
        return progress::done;
    }

    progress step_key(context & ctx, size_t & cur) {
        std::string text;
        size_t which = 0;
        match m = read_until(ctx, cur, {"="}, text, which);
        if (m != match::yes) return m == match::more ? progress::more : progress::fail;
        std::string_view key = trim(text);
        if (!identifier(key)) return progress::fail;
        std::string out = first_arg_ ? "\"" : ", \"";
        json_escape_append(key, out);
        call_.args(ctx, out + "\": ");
        first_arg_ = false;
        value_ = literal_parser();
        st_ = st::value;
        return progress::done;
    }

    progress step_value(context & ctx, size_t & cur) {
        std::string out;
        cur += value_.feed(std::string_view(ctx.buf).substr(cur), out);
        if (value_.state() == literal_parser::status::more && ctx.at_end) value_.finish(out);
        call_.args(ctx, out);
        if (value_.started()) call_.commit(ctx);
        if (value_.state() == literal_parser::status::error) return progress::fail;
        if (value_.state() == literal_parser::status::more) return progress::more;
        st_ = st::after_value;
        return progress::done;
    }

    void end_call(context & ctx) {
        call_.args(ctx, "}");
        call_.end(ctx);
        ++calls_;
        st_ = st::after_call;
    }

    st st_ = st::open;
    bool bracket_ = false;
    bool first_arg_ = true;
    pending_call call_;
    size_t call_start_ = 0;
    int calls_ = 0;
    literal_parser value_;
};

// <|tool_call>call:name{key:value,…}<tool_call|>, strings between <|"|> marks.
class gemma4_block : public call_block {
public:
    progress step(context & ctx, size_t & cur) override {
        if (st_ == st::prefix) {
            match m = match_after_space(ctx, cur, "call:");
            if (m != match::yes) return m == match::more ? progress::more : progress::fail;
            st_ = st::name;
        }
        if (st_ == st::name) {
            std::string text;
            size_t which = 0;
            match m = read_until(ctx, cur, {"{"}, text, which, 256, true);
            if (m != match::yes) return m == match::more ? progress::more : progress::fail;
            std::string name(trim(text));
            if (!valid_name(name)) return progress::fail;
            call_.open("", name);  // it goes out once "{" is read
            st_ = st::args;
        }
        if (st_ == st::args) {
            std::string out;
            cur += args_.feed(std::string_view(ctx.buf).substr(cur), out);
            call_.args(ctx, out);
            if (args_.started()) call_.commit(ctx);
            if (args_.state() == literal_parser::status::error) return progress::fail;
            if (args_.state() == literal_parser::status::more) return progress::more;
            call_.end(ctx);
            st_ = st::close;
        }
        match m = match_after_space(ctx, cur, "<tool_call|>");
        return m == match::more ? progress::more : progress::done;
    }
    bool committed() const override { return call_.begun() || st_ == st::close; }
    size_t abort(context & ctx, size_t cur) override {
        if (call_.begun()) call_.close_cut(ctx, args_);
        return cur;
    }

private:
    enum class st : uint8_t { prefix, name, args, close };
    st st_ = st::prefix;
    pending_call call_;
    literal_parser args_{{.gemma_strings = true, .object_only = true}};
};

}  // namespace

std::unique_ptr<machine> make_call_syntax_family(family f) {
    tagged_machine::spec s;
    s.reasoning = family_reasoning(f);
    if (f == family::lfm_pythonic) {
        s.triggers = {{"<|tool_call_start|>", 0}};
        return std::make_unique<tagged_machine>(std::move(s), [](int) { return std::make_unique<pythonic_block>(); });
    }
    if (f == family::gemma4) {
        s.triggers = {{"<|tool_call>", 0}};
        return std::make_unique<tagged_machine>(std::move(s), [](int) { return std::make_unique<gemma4_block>(); });
    }
    return nullptr;
}

}  // namespace toolcall::detail
