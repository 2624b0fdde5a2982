// The batch loop's embedding requests: queued whole, their inputs packed as sequences into
// decodes of the embeddings context, the pooled vectors handed back in input order.
#include "batch-loop-impl.h"

#include <algorithm>

namespace {

// The largest number of sequences one embeddings decode holds.
constexpr int32_t embd_max_seqs = int32_t(kv_cache_max_seq);

}  // namespace

bool batch_loop::submit_embeddings(embd_request r, std::string * why) {
    impl & s = *impl_;
    auto fail = [&](std::string msg) {
        if (why) *why = std::move(msg);
        return false;
    };
    if (!s.embd_ctx) return fail("this server computes no embeddings");
    if (!r.done) return fail("no completion callback");
    if (r.inputs.empty()) return fail("no inputs");
    const int32_t n_vocab = s.m.hparams().n_vocab;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
        const std::vector<int32_t> & in = r.inputs[i];
        const std::string at = "input " + std::to_string(i);
        if (in.empty()) return fail(at + " has no tokens");
        if (in.size() > s.embd_max) {
            return fail(at + " has " + std::to_string(in.size()) + " tokens; an input may have at most " +
                        std::to_string(s.embd_max));
        }
        for (int32_t id : in) {
            if (id < 0 || id >= n_vocab) return fail(at + ": token " + std::to_string(id) + " is outside the vocabulary");
        }
    }
    auto job = std::make_unique<embd_job>();
    job->out.resize(r.inputs.size());
    job->req = std::move(r);
    {
        std::lock_guard<std::mutex> lk(s.mu);
        if (s.stopping) return fail("the server is shutting down");
        if (s.embd_queue.size() >= s.params.max_queue + s.params.n_parallel) return fail("the queue is full");
        s.embd_queue.push_back(std::move(job));
    }
    s.cv.notify_all();
    return true;
}

bool batch_loop::has_embeddings() const { return impl_->embd_ctx != nullptr; }
uint32_t batch_loop::embd_max_tokens() const { return impl_->embd_max; }
int32_t batch_loop::embd_size() const { return impl_->embd_ctx ? impl_->embd_ctx->n_embd_out() : 0; }
pooling_type batch_loop::embd_pooling() const {
    return impl_->embd_ctx ? impl_->embd_ctx->pooling() : pooling_type::unspecified;
}

bool batch_loop::impl::embd_step(size_t budget) {
    {
        std::lock_guard<std::mutex> lk(mu);
        while (!embd_queue.empty()) {
            embd_running.push_back(std::move(embd_queue.front()));
            embd_queue.pop_front();
        }
    }
    if (embd_running.empty()) return false;
    llm_batch b;
    std::vector<std::pair<embd_job *, size_t>> seqs;  // sequence → (job, input)
    for (auto & job : embd_running) {
        for (; job->next < job->req.inputs.size() && int32_t(seqs.size()) < embd_max_seqs; ++job->next) {
            const std::vector<int32_t> & in = job->req.inputs[job->next];
            if (!seqs.empty() && b.size() + in.size() > budget) break;
            const int32_t seq = int32_t(seqs.size());
            for (size_t i = 0; i < in.size(); ++i) b.add(in[i], int32_t(i), seq, true);
            seqs.emplace_back(job.get(), job->next);
        }
        if (job->next < job->req.inputs.size()) break;  // inputs keep their order across decodes
    }
    if (seqs.empty()) return false;
    if (embd_ctx->decode(b) != decode_ok) {
        embd_fail(embd_ctx->last_error());
        return true;
    }
    const size_t n = size_t(embd_ctx->n_embd_out());
    for (size_t seq = 0; seq < seqs.size(); ++seq) {
        const float * v = embd_ctx->embeddings_seq(int32_t(seq));
        auto & [job, input] = seqs[seq];
        if (v) job->out[input].assign(v, v + n);
        ++job->done;
    }
    while (!embd_running.empty() && embd_running.front()->done == embd_running.front()->req.inputs.size()) {
        std::unique_ptr<embd_job> job = std::move(embd_running.front());
        embd_running.pop_front();
        const bool complete = std::all_of(job->out.begin(), job->out.end(), [](const auto & v) { return !v.empty(); });
        if (complete) {
            job->req.done(std::move(job->out), "");
        } else {
            job->req.done({}, "an input's embedding was not computed");
        }
    }
    return true;
}

void batch_loop::impl::embd_fail(const std::string & message) {
    std::deque<std::unique_ptr<embd_job>> failed;
    failed.swap(embd_running);
    for (auto & job : failed) job->req.done({}, message.empty() ? "the embeddings could not be computed" : message);
}

void batch_loop::impl::drop_cancelled_embd() {
    std::vector<std::unique_ptr<embd_job>> gone;
    {
        std::lock_guard<std::mutex> lk(mu);
        for (auto it = embd_queue.begin(); it != embd_queue.end();) {
            if ((*it)->req.cancelled && (*it)->req.cancelled()) {
                gone.push_back(std::move(*it));
                it = embd_queue.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto it = embd_running.begin(); it != embd_running.end();) {
        if ((*it)->req.cancelled && (*it)->req.cancelled()) {
            gone.push_back(std::move(*it));
            it = embd_running.erase(it);
        } else {
            ++it;
        }
    }
    for (auto & job : gone) job->req.done({}, "cancelled");
}

void batch_loop::impl::stop_embd() {
    {
        std::lock_guard<std::mutex> lk(mu);
        while (!embd_queue.empty()) {
            embd_running.push_back(std::move(embd_queue.front()));
            embd_queue.pop_front();
        }
    }
    embd_fail("the server is shutting down");
}
