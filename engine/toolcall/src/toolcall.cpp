// toolcall.cpp — the stream parser over a family's machine, the one-shot parse, and the OpenAI
// JSON forms of messages and deltas.
#include "engine.h"

namespace toolcall {

namespace {

std::string arguments_text(const nlohmann::ordered_json & args) {
    return args.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

struct stream_parser::impl {
    impl(family f, const parse_options & opts) : ctx(opts), m(detail::make_machine(f)) {}

    void run() {
        try {
            while (m->step(ctx)) {
            }
        } catch (const std::bad_alloc &) {
            throw;
        } catch (...) {
            // Not expected from any machine: keep the stream going with the rest as content.
            ctx.out.call_end();
            ctx.out.content(std::string_view(ctx.buf).substr(std::min(ctx.pos, ctx.buf.size())));
            ctx.pos = ctx.buf.size();
            m = detail::make_machine(family::none);
            ctx.reasoning_open = false;
            failed = true;
        }
    }

    detail::context ctx;
    std::unique_ptr<detail::machine> m;
    bool failed = false;
    bool finished = false;
};

stream_parser::stream_parser(family f, parse_options opts) : impl_(std::make_unique<impl>(f, opts)) {}

stream_parser::~stream_parser() = default;

std::vector<delta> stream_parser::feed(std::string_view piece) {
    if (impl_->finished) return {};
    if (impl_->failed) {
        impl_->ctx.out.content(piece);
        return impl_->ctx.out.take();
    }
    impl_->ctx.buf.append(piece);
    impl_->run();
    return impl_->ctx.out.take();
}

std::vector<delta> stream_parser::finish() {
    if (impl_->finished) return {};
    impl_->finished = true;
    impl_->ctx.at_end = true;
    if (!impl_->failed) impl_->run();
    impl_->ctx.out.finish();
    return impl_->ctx.out.take();
}

const message & stream_parser::result() const { return impl_->ctx.out.result(); }

bool stream_parser::finished() const { return impl_->finished; }

message parse(family f, std::string_view text, const parse_options & opts) {
    stream_parser p(f, opts);
    p.feed(text);
    p.finish();
    return p.result();
}

nlohmann::ordered_json message::to_json() const {
    nlohmann::ordered_json j;
    j["role"] = "assistant";
    if (content.empty() && !tool_calls.empty()) {
        j["content"] = nullptr;
    } else {
        j["content"] = content;
    }
    if (!reasoning_content.empty()) j["reasoning_content"] = reasoning_content;
    if (!tool_calls.empty()) {
        auto & calls = j["tool_calls"] = nlohmann::ordered_json::array();
        for (const tool_call & tc : tool_calls) {
            calls.push_back({{"id", tc.id},
                             {"type", "function"},
                             {"function", {{"name", tc.name}, {"arguments", arguments_text(tc.arguments)}}}});
        }
    }
    return j;
}

nlohmann::ordered_json delta::to_json() const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    switch (what) {
        case kind::content: j["content"] = text; break;
        case kind::reasoning: j["reasoning_content"] = text; break;
        case kind::tool_call: {
            nlohmann::ordered_json c;
            c["index"] = call.index;
            nlohmann::ordered_json fn = nlohmann::ordered_json::object();
            if (!call.id.empty()) {
                c["id"] = call.id;
                c["type"] = "function";
                fn["name"] = call.name;
            }
            fn["arguments"] = call.arguments;
            c["function"] = std::move(fn);
            j["tool_calls"] = nlohmann::ordered_json::array({std::move(c)});
            break;
        }
    }
    return j;
}

}  // namespace toolcall
