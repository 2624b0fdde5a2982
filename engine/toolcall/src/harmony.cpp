// harmony.cpp — gpt-oss-harmony: the output is a series of messages, each a header
// ("assistant to=functions.get_weather<|channel|>commentary json") then <|message|> and a body
// that ends with <|end|>, <|call|> or <|return|>. The analysis channel is reasoning, final (and
// commentary without a recipient) is content, a recipient makes the body a call's arguments. The
// prompt ends with "<|start|>assistant", so the output starts inside the first header.
#include "engine.h"

namespace toolcall::detail {

namespace {

const std::vector<std::string> body_ends = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};

// The word after `key` in a header ("to=" → "functions.get_weather"); "" when absent.
std::string header_field(std::string_view header, std::string_view key) {
    size_t p = header.find(key);
    if (p == std::string_view::npos) return "";
    p += key.size();
    size_t e = p;
    while (e < header.size() && !is_space(header[e]) && header[e] != '<') ++e;
    return std::string(header.substr(p, e - p));
}

class harmony_machine : public machine {
public:
    bool step(context & ctx) override {
        switch (st_) {
            case st::between: return step_between(ctx);
            case st::header: return step_header(ctx);
            case st::text: return step_text(ctx);
            case st::call: return step_call(ctx);
        }
        return false;
    }

private:
    enum class st : uint8_t { between, header, text, call };

    // Before a message: its header (or stray end tokens); plain text is a final message.
    bool step_between(context & ctx) {
        size_t c = started_ ? skip_space(ctx, ctx.pos) : ctx.pos;
        if (c == ctx.buf.size()) return false;
        bool wait = false;
        for (std::string_view lit : {"<|start|>", "<|channel|>", " to=", "to=", "<|end|>", "<|call|>", "<|return|>"}) {
            size_t after = c;
            match m = match_literal(ctx, after, lit);
            wait = wait || m == match::more;
            if (m != match::yes) continue;
            bool header = lit == "<|start|>" || lit == "<|channel|>" || lit == " to=" || lit == "to=";
            ctx.pos = lit == "<|start|>" || !header ? after : c;
            started_ = true;
            if (header) st_ = st::header;
            return true;
        }
        if (wait) return false;
        started_ = true;
        ctx.pos = c;
        reasoning_ = false;
        st_ = st::text;
        return true;
    }

    bool step_header(context & ctx) {
        constexpr std::string_view message = "<|message|>";
        constexpr size_t longest_header = 1024;
        size_t hit = ctx.buf.find(message, ctx.pos);
        if (hit == std::string::npos || hit - ctx.pos > longest_header) {
            // Decided by the text alone: no header when <|message|> cannot start in reach any more.
            if (hit == std::string::npos && !ctx.at_end && ctx.buf.size() - ctx.pos < longest_header + message.size()) {
                return false;
            }
            reasoning_ = false;  // not a header: text
            st_ = st::text;
            return true;
        }
        std::string_view header = std::string_view(ctx.buf).substr(ctx.pos, hit - ctx.pos);
        std::string recipient = header_field(header, "to=");
        std::string channel = header_field(header, "<|channel|>");
        ctx.pos = hit + message.size();
        if (!recipient.empty() && recipient != "assistant" && recipient != "user" && recipient != "all") {
            std::string name = recipient.rfind("functions.", 0) == 0 ? recipient.substr(10) : recipient;
            if (valid_name(name)) {
                call_.open("", name);  // it goes out once the body begins as JSON
                args_ = args_reader();
                body_start_ = ctx.pos;
                st_ = st::call;
                return true;
            }
        }
        reasoning_ = channel == "analysis";
        st_ = st::text;
        return true;
    }

    bool step_text(context & ctx) {
        marker_hit hit = find_first_marker(ctx.buf, ctx.pos, body_ends);
        std::string_view rest = std::string_view(ctx.buf).substr(ctx.pos);
        size_t end = hit.pos != std::string::npos ? hit.pos - ctx.pos
                     : ctx.at_end                 ? rest.size()
                                                  : rest.size() - partial_marker_suffix(rest, body_ends);
        (reasoning_ ? ctx.out.reasoning(rest.substr(0, end)) : ctx.out.content(rest.substr(0, end)));
        ctx.pos += end;
        if (hit.pos == std::string::npos) return false;
        ctx.pos += body_ends[hit.index].size();
        st_ = body_ends[hit.index] == "<|start|>" ? st::header : st::between;
        return true;
    }

    bool step_call(context & ctx) {
        std::string out;
        size_t cur = ctx.pos;
        progress p = args_.step(ctx, cur, out);
        ctx.pos = cur;
        call_.args(ctx, out);
        if (args_.started()) call_.commit(ctx);
        if (p == progress::more && !ctx.at_end) return false;
        reasoning_ = false;
        if (p == progress::done) {
            call_.end(ctx);
            st_ = st::between;
        } else if (call_.begun()) {  // cut or malformed: the arguments closed, the rest is text
            call_.close_cut(ctx, args_);
            st_ = st::text;
        } else {  // the body was never JSON: it is text
            call_.drop();
            ctx.pos = body_start_;
            st_ = st::text;
        }
        return true;
    }

    st st_ = st::between;
    bool started_ = false;
    bool reasoning_ = false;
    args_reader args_;
    pending_call call_;
    size_t body_start_ = 0;
};

}  // namespace

std::unique_ptr<machine> make_harmony_machine() { return std::make_unique<harmony_machine>(); }

}  // namespace toolcall::detail
