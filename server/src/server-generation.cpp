// Choice sinks of a generation request: text assembly, stop strings, logprobs, streaming chunks
// and the final JSON.
#include "server-generation.h"

#include "api/error.h"

#include <algorithm>
#include <cmath>

namespace {

int64_t utf8_chars(std::string_view s) {
    int64_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

}  // namespace

void generation_state::begin_stream_locked() {
    if (started_stream) return;
    started_stream = true;
    res->begin_stream(200, "text/event-stream", {{"Cache-Control", "no-cache"}});
}

void generation_state::write_locked(const std::string & json) {
    begin_stream_locked();
    if (!res->write(sse_data(json))) cancelled = true;
}

api_error generation_state::error() const {
    return error_is_request ? api_error_invalid_request(error_message) : api_error_internal(error_message);
}

void generation_state::choice_finished(const gen_usage & u, bool count_prompt) {
    if (count_prompt) {
        usage.prompt_tokens += u.prompt_tokens;
        usage.cached_tokens += u.cached_tokens;
        if (metrics) {
            metrics->add_prompt_tokens(uint64_t(u.prompt_tokens));
            metrics->add_prompt_tokens_cached(uint64_t(u.cached_tokens));
        }
    }
    usage.completion_tokens += u.completion_tokens;
    if (metrics) metrics->add_generation_tokens(uint64_t(u.completion_tokens));
    if (++n_finished < n_choices) return;
    int status = 200;
    if (cancelled && !any_error) {
        status = 499;  // the client went away (nginx's convention, for the access counters)
        res->end();
    } else if (stream) {
        if (any_error) {
            write_locked(api_error_to_json(error()));
        } else if (include_usage) {
            write_locked(kind == generation_kind::chat ? chat_usage_chunk_to_json(meta, usage)
                                                       : completion_usage_chunk_to_json(meta, usage));
        }
        begin_stream_locked();
        res->write(sse_done());
        res->end();
    } else if (any_error) {
        const api_error e = error();
        status = e.status;
        res->respond(e.status, "application/json", api_error_to_json(e));
    } else if (kind == generation_kind::chat) {
        chat_response r{meta, chat_choices, usage};
        res->respond(200, "application/json", chat_response_to_json(r));
    } else {
        completion_response r{meta, completion_choices, usage};
        res->respond(200, "application/json", completion_response_to_json(r));
    }
    if (on_done) on_done(status);
}

generation_sink::generation_sink(std::shared_ptr<generation_state> st, int32_t index, std::vector<std::string> stops,
                                 bool count_prompt, std::string echo_prefix)
    : st_(std::move(st)), index_(index), count_prompt_(count_prompt), echo_prefix_(std::move(echo_prefix)),
      stops_(std::move(stops)) {
    echo_chars_ = utf8_chars(echo_prefix_);
    if (st_->kind == generation_kind::chat && st_->chat_output.parse) {
        parser_ = std::make_unique<toolcall::stream_parser>(st_->chat_output.family, st_->chat_output.opts);
    }
}

void generation_sink::on_admitted(int32_t, int32_t) {
    if (admitted_once_) return;  // resumed after a preemption: nothing new to say
    admitted_once_ = true;
    std::lock_guard<std::mutex> lk(st_->mu);
    if (!st_->stream) return;
    if (st_->kind == generation_kind::chat) {
        chat_chunk c;
        c.index = index_;
        c.kind = chat_delta_kind::role;
        st_->write_locked(chat_chunk_to_json(st_->meta, c));
    } else if (!echo_prefix_.empty() && !st_->prompt_logprobs) {  // else with the prompt's logprobs
        completion_choice c;
        c.index = index_;
        c.text = echo_prefix_;
        st_->write_locked(completion_chunk_to_json(st_->meta, c));
    }
}

void generation_sink::emit(const std::string & text, std::vector<completion_token_logprob> * clp,
                           std::vector<chat_token_logprob> * hlp, api_finish_reason fr) {
    // Caller holds st_->mu.
    if (st_->stream) {
        if (text.empty() && fr == api_finish_reason::none && !(clp && !clp->empty()) && !(hlp && !hlp->empty())) return;
        if (st_->kind == generation_kind::chat) {
            chat_chunk c;
            c.index = index_;
            c.kind = fr == api_finish_reason::none ? chat_delta_kind::content : chat_delta_kind::finish;
            c.content = text;
            if (hlp && st_->n_logprobs >= 0) c.logprobs = *hlp;
            c.finish_reason = fr;
            if (fr != api_finish_reason::none && !text.empty()) {  // the last text, then the finish
                chat_chunk t = c;
                t.kind = chat_delta_kind::content;
                t.finish_reason = api_finish_reason::none;
                st_->write_locked(chat_chunk_to_json(st_->meta, t));
                c.logprobs.reset();
            }
            st_->write_locked(chat_chunk_to_json(st_->meta, c));
        } else {
            completion_choice c;
            c.index = index_;
            c.text = text;
            if (clp && st_->n_logprobs >= 0) c.logprobs = *clp;
            c.finish_reason = fr;
            st_->write_locked(completion_chunk_to_json(st_->meta, c));
        }
        return;
    }
    if (st_->kind == generation_kind::chat) {
        chat_choice & c = st_->chat_choices[size_t(index_)];
        c.content += text;
        if (hlp && st_->n_logprobs >= 0) {
            if (!c.logprobs) c.logprobs.emplace();
            c.logprobs->insert(c.logprobs->end(), hlp->begin(), hlp->end());
        }
        if (fr != api_finish_reason::none) c.finish_reason = fr;
    } else {
        completion_choice & c = st_->completion_choices[size_t(index_)];
        c.text += text;
        if (clp && st_->n_logprobs >= 0) {
            if (!c.logprobs) c.logprobs.emplace();
            c.logprobs->insert(c.logprobs->end(), clp->begin(), clp->end());
        }
        if (fr != api_finish_reason::none) c.finish_reason = fr;
    }
}

std::vector<toolcall::delta> generation_sink::unsplit_reasoning(std::vector<toolcall::delta> deltas, bool end) {
    std::vector<toolcall::delta> out;
    auto text = [&out](const char * s) {
        toolcall::delta d;
        d.text = s;
        out.push_back(std::move(d));
    };
    for (toolcall::delta & d : deltas) {
        if (d.what == toolcall::delta::kind::reasoning) {
            if (!think_open_) text("<think>");
            think_open_ = true;
            d.what = toolcall::delta::kind::content;
        } else if (think_open_) {
            text("</think>");
            think_open_ = false;
        }
        out.push_back(std::move(d));
    }
    if (end && think_open_) text("</think>");
    think_open_ = think_open_ && !end;
    return out;
}

void generation_sink::emit_chat_chunk(chat_chunk c) {
    c.index = index_;
    if (!pending_logprobs_.empty()) {
        c.logprobs = std::move(pending_logprobs_);
        pending_logprobs_.clear();
    }
    st_->write_locked(chat_chunk_to_json(st_->meta, c));
}

void generation_sink::emit_parsed(std::vector<toolcall::delta> deltas, std::vector<chat_token_logprob> * hlp,
                                  api_finish_reason fr) {
    // Caller holds st_->mu.
    if (!st_->chat_output.split_reasoning) deltas = unsplit_reasoning(std::move(deltas), fr != api_finish_reason::none);
    if (hlp && st_->n_logprobs >= 0) pending_logprobs_.insert(pending_logprobs_.end(), hlp->begin(), hlp->end());
    if (!st_->stream) {
        chat_choice & c = st_->chat_choices[size_t(index_)];
        for (const toolcall::delta & d : deltas) {
            if (d.what == toolcall::delta::kind::content) c.content += d.text;
            if (d.what == toolcall::delta::kind::reasoning) c.reasoning_content += d.text;
            if (d.what != toolcall::delta::kind::tool_call) continue;
            if (size_t(d.call.index) >= c.tool_calls.size()) c.tool_calls.resize(size_t(d.call.index) + 1, {"", "", ""});
            chat_tool_call & call = c.tool_calls[size_t(d.call.index)];
            if (!d.call.id.empty()) call.id = d.call.id;
            if (!d.call.name.empty()) call.name = d.call.name;
            call.arguments += d.call.arguments;
        }
        if (st_->n_logprobs >= 0) {
            if (!c.logprobs) c.logprobs.emplace();
            c.logprobs->insert(c.logprobs->end(), pending_logprobs_.begin(), pending_logprobs_.end());
            pending_logprobs_.clear();
        }
        if (fr != api_finish_reason::none) c.finish_reason = fr;
        return;
    }
    for (const toolcall::delta & d : deltas) {
        chat_chunk c;
        c.kind = d.what == toolcall::delta::kind::content     ? chat_delta_kind::content
                 : d.what == toolcall::delta::kind::reasoning ? chat_delta_kind::reasoning
                                                              : chat_delta_kind::tool_call;
        c.content = d.text;
        c.call = {d.call.index, d.call.id, d.call.name, d.call.arguments};
        emit_chat_chunk(std::move(c));
    }
    if (fr == api_finish_reason::none) return;
    if (!pending_logprobs_.empty()) emit_chat_chunk(chat_chunk{});  // the last tokens' logprobs
    chat_chunk f;
    f.kind = chat_delta_kind::finish;
    f.finish_reason = fr;
    emit_chat_chunk(std::move(f));
}

bool generation_sink::on_token(const gen_token & t) {
    const auto now = std::chrono::steady_clock::now();
    if (st_->metrics) {
        if (first_token_) {
            st_->metrics->observe_time_to_first_token(std::chrono::duration<double>(now - st_->t0).count());
        } else {
            st_->metrics->observe_inter_token_latency(std::chrono::duration<double>(now - last_token_).count());
        }
    }
    first_token_ = false;
    last_token_ = now;
    const std::string piece = st_->tok->token_to_piece(t.id, st_->chat_output.render_control);
    const std::string text = stops_.push(utf8_.push(piece));
    std::vector<completion_token_logprob> clp;
    std::vector<chat_token_logprob> hlp;
    if (st_->n_logprobs >= 0 && !stops_.stopped()) {
        if (st_->kind == generation_kind::chat) {
            chat_token_logprob e;
            e.token = piece;
            e.logprob = t.logprob;
            for (const auto & [id, lp] : t.top) e.top.push_back({st_->tok->token_to_piece(id), lp});
            hlp.push_back(std::move(e));
        } else {
            completion_token_logprob e;
            e.token = piece;
            e.logprob = t.logprob;
            e.text_offset = echo_chars_ + text_chars_;
            for (const auto & [id, lp] : t.top) e.top.emplace_back(st_->tok->token_to_piece(id), lp);
            clp.push_back(std::move(e));
        }
    }
    text_ += text;
    text_chars_ += utf8_chars(text);
    std::lock_guard<std::mutex> lk(st_->mu);
    if (parser_) {
        emit_parsed(parser_->feed(text), &hlp, api_finish_reason::none);
    } else {
        emit(text, &clp, &hlp, api_finish_reason::none);
    }
    return !stops_.stopped() && !st_->cancelled.load();
}

// The prompt's tokens with their log-probabilities, ahead of the completion's: text offsets
// count the characters of the pieces before each token, at most the echoed text's length (an SPM
// tokenizer's leading space or a BOS piece need not appear in the prompt text as given).
void generation_sink::on_prompt_logprobs(const std::vector<gen_token> & prompt) {
    std::vector<completion_token_logprob> clp;
    int64_t offset = 0;
    for (const gen_token & t : prompt) {
        completion_token_logprob e;
        e.token = st_->tok->token_to_piece(t.id);
        if (!std::isnan(t.logprob)) e.logprob = t.logprob;
        for (const auto & [id, lp] : t.top) e.top.emplace_back(st_->tok->token_to_piece(id), lp);
        e.text_offset = std::min(offset, echo_chars_);
        offset += utf8_chars(e.token);
        clp.push_back(std::move(e));
    }
    std::lock_guard<std::mutex> lk(st_->mu);
    // Streaming: the first chunk carries the echoed prompt with its logprobs; otherwise the text
    // is prepended when the choice finishes.
    emit(st_->stream ? echo_prefix_ : std::string(), &clp, nullptr, api_finish_reason::none);
}

void generation_sink::on_finished(gen_finish reason, const gen_usage & usage, const std::string & message) {
    std::string tail;
    if (!stops_.stopped()) tail = stops_.push(utf8_.flush()) + stops_.flush();
    api_finish_reason fr = reason == gen_finish::length ? api_finish_reason::length : api_finish_reason::stop;
    std::lock_guard<std::mutex> lk(st_->mu);
    if (reason == gen_finish::error || reason == gen_finish::refused) {
        // the first error is kept, except that a server fault outranks a refusal of the request
        // (several choices may end either way)
        const bool refusal = reason == gen_finish::refused;
        if (!st_->any_error || (st_->error_is_request && !refusal)) {
            st_->error_message = message.empty() ? "generation failed" : message;
            st_->error_is_request = refusal;
        }
        st_->any_error = true;
    } else if (reason != gen_finish::cancelled && parser_) {
        std::vector<toolcall::delta> deltas = parser_->feed(tail);
        for (toolcall::delta & d : parser_->finish()) deltas.push_back(std::move(d));
        if (fr == api_finish_reason::stop && !parser_->result().tool_calls.empty()) fr = api_finish_reason::tool_calls;
        emit_parsed(std::move(deltas), nullptr, fr);
    } else if (reason != gen_finish::cancelled) {
        emit(tail, nullptr, nullptr, fr);
    }
    if (!st_->stream && st_->kind == generation_kind::completion && !echo_prefix_.empty()) {
        std::string & text = st_->completion_choices[size_t(index_)].text;
        text.insert(0, echo_prefix_);
    }
    st_->choice_finished(usage, count_prompt_);
}
