// One API generation request (completions or chat) spread over its choices, and the sink of
// each choice: tokens → UTF-8-safe text → stop strings → JSON or SSE chunks (internal).
#pragma once

#include "api/chat-response.h"
#include "chat-prompt.h"
#include "api/completion-response.h"
#include "api/error.h"
#include "engine/tokenizer.h"
#include "engine/utf8-stream.h"
#include "api/stop-strings.h"
#include "server/batch-loop.h"
#include "server/http-server.h"
#include "server/metrics.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

enum class generation_kind { completion, chat };

// What the whole request needs to answer; shared by its choice sinks.
struct generation_state {
    generation_kind kind = generation_kind::completion;
    bool stream = false;
    bool include_usage = false;
    int32_t n_logprobs = -1;  // -1: no logprobs; else the alternatives per token
    bool prompt_logprobs = false;  // echo + logprobs: the prompt's tokens lead the logprobs
    api_response_meta meta;
    std::shared_ptr<http_response> res;
    const tokenizer * tok = nullptr;
    server_metrics * metrics = nullptr;
    std::chrono::steady_clock::time_point t0;
    // Called once with the HTTP status when the response has been completed.
    std::function<void(int status)> on_done;

    std::atomic<bool> cancelled{false};
    std::mutex mu;  // sinks run on the batch loop thread; on_close on an I/O thread
    size_t n_choices = 0, n_finished = 0;
    bool started_stream = false;
    bool any_error = false;
    bool error_is_request = false;  // every error was a refusal of the request's constraint: 400
    std::string error_message;
    std::vector<completion_choice> completion_choices;
    std::vector<chat_choice> chat_choices;
    chat_output_options chat_output;  // chat: how the output is read (tool calls, reasoning)
    api_usage usage;

    void begin_stream_locked();
    void write_locked(const std::string & json);
    // The error the response carries once any_error: 400 for a refused constraint, else 500.
    api_error error() const;
    void choice_finished(const gen_usage & u, bool count_prompt);
};

class generation_sink final : public gen_sink {
public:
    generation_sink(std::shared_ptr<generation_state> st, int32_t index, std::vector<std::string> stops,
                    bool count_prompt, std::string echo_prefix);
    void on_admitted(int32_t n_prompt, int32_t n_cached) override;
    bool on_token(const gen_token & t) override;
    void on_prompt_logprobs(const std::vector<gen_token> & prompt) override;
    void on_finished(gen_finish reason, const gen_usage & usage, const std::string & message) override;
    bool cancelled() const override { return st_->cancelled.load(); }

private:
    void emit(const std::string & text, std::vector<completion_token_logprob> * clp,
              std::vector<chat_token_logprob> * hlp, api_finish_reason fr);
    // Chat output read by the family's parser: its deltas as chunks (streaming) or into the choice.
    void emit_parsed(std::vector<toolcall::delta> deltas, std::vector<chat_token_logprob> * hlp, api_finish_reason fr);
    void emit_chat_chunk(chat_chunk c);
    std::vector<toolcall::delta> unsplit_reasoning(std::vector<toolcall::delta> deltas, bool end);

    std::shared_ptr<generation_state> st_;
    int32_t index_;
    bool count_prompt_;
    std::string echo_prefix_;
    int64_t echo_chars_ = 0;  // UTF-8 characters of echo_prefix_ (logprob text offsets start there)
    bool admitted_once_ = false;
    utf8_stream utf8_;
    stop_string_stream stops_;
    std::string text_;        // everything emitted for this choice
    int64_t text_chars_ = 0;  // UTF-8 characters in text_ (text_offset of logprobs)
    std::chrono::steady_clock::time_point last_token_;
    bool first_token_ = true;
    std::unique_ptr<toolcall::stream_parser> parser_;  // chat output read for calls and reasoning
    std::vector<chat_token_logprob> pending_logprobs_;  // of tokens whose text no delta carried yet
    bool think_open_ = false;  // reasoning kept in content: "<think>" written, "</think>" not yet
};
