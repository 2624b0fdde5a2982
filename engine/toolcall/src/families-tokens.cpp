// families-tokens.cpp — families that frame each call with special tokens and write the
// arguments as JSON: deepseek-r1, deepseek-v3.1, kimi, solar, functionary-v3.1.
#include "engine.h"

namespace toolcall::detail {

namespace {

struct token_format {
    std::string call_begin;           // the marker before each call of a section
    std::string section_end;          // "" when the section has no closing marker
    std::vector<std::string> header;  // the delimiter ending each header field, in order
    size_t name_field = 0;
    int id_field = -1;                // -1: the format carries no id
    std::string call_end;             // after the arguments (consumed when present)
    bool kimi_ids = false;            // the id "functions.get_weather:0" holds the name
    bool fenced = false;              // deepseek-r1: "function<｜tool▁sep｜>name\n```json\n{...}\n```"
    bool single = false;              // one call per trigger, no section
};

// A section of calls (or one call), each: header fields, the arguments, the closing marker.
class token_calls_block : public call_block {
public:
    token_calls_block(const token_format & f, bool in_call) : f_(f), st_(in_call ? st::header : st::between) {}

    progress step(context & ctx, size_t & cur) override {
        for (;;) {
            progress p = step_once(ctx, cur);
            if (p != progress::done || st_ == st::finished) return p;
        }
    }
    bool committed() const override { return calls_ > 0 || call_.begun(); }
    size_t abort(context & ctx, size_t cur) override {
        if (!call_.begun()) return call_.active() ? call_start_ : cur;  // that call's text is content
        call_.close_cut(ctx, args_);
        return cur;
    }

private:
    enum class st : uint8_t { between, header, deepseek_kind, deepseek_name, deepseek_fence, args, fence_close, call_end, finished };

    // One state's worth; done: go on with the next state.
    progress step_once(context & ctx, size_t & cur) {
        switch (st_) {
            case st::between: return step_between(ctx, cur);
            case st::header: return step_header(ctx, cur);
            case st::deepseek_kind: {  // "{" after the separator: v3.1's name<｜tool▁sep｜>{…}
                size_t c = skip_space(ctx, cur);
                if (c == ctx.buf.size()) return ctx.at_end ? progress::fail : progress::more;
                if (ctx.buf[c] == '{') return open_call(fields_[f_.name_field], "");
                fenced_call_ = true;
                st_ = st::deepseek_name;
                return progress::done;
            }
            case st::deepseek_name: {
                std::string name;
                size_t which = 0;
                match m = read_until(ctx, cur, {"\n"}, name, which);
                if (m != match::yes) return m == match::more ? progress::more : progress::fail;
                progress p = open_call(std::string(trim(name)), "");
                if (p == progress::done) st_ = st::deepseek_fence;
                return p;
            }
            case st::deepseek_fence: {  // "```json\n" before the arguments
                std::string fence;
                size_t which = 0;
                match m = read_until(ctx, cur, {"{"}, fence, which, 16, true);
                if (m != match::yes) return m == match::more ? progress::more : progress::fail;
                std::string_view t = trim(fence);
                if (!t.empty() && t != "```" && t != "```json") return progress::fail;
                st_ = st::args;
                return progress::done;
            }
            case st::args: return step_args(ctx, cur);
            case st::fence_close: {
                match m = match_after_space(ctx, cur, "```");
                if (m == match::more) return progress::more;
                st_ = st::call_end;
                return progress::done;
            }
            case st::call_end: {
                match m = f_.call_end.empty() ? match::no : match_after_space(ctx, cur, f_.call_end);
                if (m == match::more) return progress::more;
                st_ = f_.single ? st::finished : st::between;
                return progress::done;
            }
            case st::finished: return progress::done;
        }
        return progress::fail;
    }

    progress step_between(context & ctx, size_t & cur) {
        call_start_ = cur;
        match m = match_after_space(ctx, cur, f_.call_begin);
        if (m == match::more) return progress::more;
        if (m == match::yes) {
            fields_.clear();
            st_ = st::header;
            return progress::done;
        }
        if (!f_.section_end.empty()) {
            m = match_after_space(ctx, cur, f_.section_end);
            if (m == match::more) return progress::more;
            if (m == match::yes) {
                st_ = st::finished;
                return progress::done;
            }
        }
        if (calls_ == 0) return progress::fail;
        st_ = st::finished;  // the rest is content
        return progress::done;
    }

    progress step_header(context & ctx, size_t & cur) {
        std::string text;
        size_t which = 0;
        match m = read_until(ctx, cur, {f_.header[fields_.size()]}, text, which);
        if (m != match::yes) return m == match::more ? progress::more : progress::fail;
        fields_.emplace_back(trim(text));
        if (fields_.size() < f_.header.size()) return progress::done;
        if (f_.fenced) {
            st_ = st::deepseek_kind;
            return progress::done;
        }
        std::string id = f_.id_field >= 0 ? fields_[static_cast<size_t>(f_.id_field)] : "";
        std::string name = fields_[f_.name_field];
        if (f_.kimi_ids) {  // functions.get_weather:0
            if (name.rfind("functions.", 0) == 0) name.erase(0, 10);
            size_t colon = name.rfind(':');
            if (colon != std::string::npos && colon + 1 < name.size() &&
                name.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
                name.erase(colon);
            }
        }
        return open_call(name, id);
    }

    progress open_call(const std::string & name, const std::string & id) {
        if (!valid_name(name)) return progress::fail;
        call_.open(id, name);
        args_ = args_reader();
        st_ = st::args;
        return progress::done;
    }

    // The call goes out once its arguments begin as an object (or a JSON string).
    progress step_args(context & ctx, size_t & cur) {
        std::string out;
        progress p = args_.step(ctx, cur, out);
        call_.args(ctx, out);
        if (args_.started()) call_.commit(ctx);  // a decision of the text, not of how it was split
        if (p != progress::done) return p;
        call_.end(ctx);
        ++calls_;
        st_ = fenced_call_ ? st::fence_close : st::call_end;
        fenced_call_ = false;
        return progress::done;
    }

    token_format f_;
    st st_;
    std::vector<std::string> fields_;
    args_reader args_;
    pending_call call_;
    size_t call_start_ = 0;  // where the current call's marker is
    int calls_ = 0;
    bool fenced_call_ = false;
};

// functionary-v3.1's <|python_tag|>: the rest of the output is code for the "python" tool.
class python_code_block : public call_block {
public:
    progress step(context & ctx, size_t & cur) override {
        if (!started_) {
            ctx.out.call_begin("", "python");
            ctx.out.call_args("{\"code\": \"");
            started_ = true;
        }
        std::string out;
        json_escape_append(std::string_view(ctx.buf).substr(cur), out);
        ctx.out.call_args(out);
        cur = ctx.buf.size();
        if (!ctx.at_end) return progress::more;
        ctx.out.call_args("\"}");
        ctx.out.call_end();
        return progress::done;
    }
    bool committed() const override { return started_; }
    size_t abort(context & ctx, size_t cur) override {
        ctx.out.call_args("\"}");
        ctx.out.call_end();
        return cur;
    }

private:
    bool started_ = false;
};

std::unique_ptr<machine> token_machine(family f, token_format fmt, std::vector<trigger> triggers) {
    tagged_machine::spec s;
    s.reasoning = family_reasoning(f);
    s.triggers = std::move(triggers);
    return std::make_unique<tagged_machine>(std::move(s), [fmt = std::move(fmt)](int kind) -> std::unique_ptr<call_block> {
        if (kind == 2) return std::make_unique<python_code_block>();
        return std::make_unique<token_calls_block>(fmt, kind == 1);
    });
}

}  // namespace

std::unique_ptr<machine> make_token_family(family f) {
    token_format fmt;
    switch (f) {
        case family::deepseek_r1:
        case family::deepseek_v3_1:
            fmt.call_begin = "<｜tool▁call▁begin｜>";
            fmt.section_end = "<｜tool▁calls▁end｜>";
            fmt.header = {"<｜tool▁sep｜>"};
            fmt.call_end = "<｜tool▁call▁end｜>";
            fmt.fenced = true;  // both forms are read by both families
            return token_machine(f, fmt, {{"<｜tool▁calls▁begin｜>", 0}, {"<｜tool▁call▁begin｜>", 1}});
        case family::kimi:
            fmt.call_begin = "<|tool_call_begin|>";
            fmt.section_end = "<|tool_calls_section_end|>";
            fmt.header = {"<|tool_call_argument_begin|>"};
            fmt.id_field = 0;
            fmt.kimi_ids = true;
            fmt.call_end = "<|tool_call_end|>";
            return token_machine(f, fmt, {{"<|tool_calls_section_begin|>", 0}, {"<|tool_call_begin|>", 1}});
        case family::solar:
            fmt.call_begin = "<|tool_call:begin|>";
            fmt.header = {"<|tool_call:name|>", "<|tool_call:args|>"};
            fmt.id_field = 0;
            fmt.name_field = 1;
            fmt.call_end = "<|tool_call:end|>";
            return token_machine(f, fmt,
                                 {{"<|tool_calls|>", 0}, {"<|tool_call:begin|>", 1}, {"<|begin|>assistant"},
                                  {"<|begin|>"}, {"<|content|>"}, {"<|end|>"}, {"<|calls|>"}});
        case family::functionary_v3_1:
            fmt.header = {">"};
            fmt.call_end = "</function>";
            fmt.single = true;
            return token_machine(f, fmt, {{"<function=", 1}, {"<|python_tag|>", 2}});
        default: return nullptr;
    }
}

}  // namespace toolcall::detail
