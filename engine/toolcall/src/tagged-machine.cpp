// tagged-machine.cpp — reasoning at the start, then content scanned for trigger markers, each
// trigger handing the text to a call block.
#include "engine.h"

#include <algorithm>

namespace toolcall::detail {

tagged_machine::tagged_machine(spec s, block_factory make_block) : spec_(std::move(s)), make_block_(std::move(make_block)) {
    for (const trigger & t : spec_.triggers) markers_.push_back(t.marker);
    next_.assign(markers_.size(), std::string::npos);
    searched_.assign(markers_.size(), 0);
}

bool tagged_machine::step(context & ctx) {
    switch (state_) {
        case state::start: return step_start(ctx);
        case state::reasoning: return step_reasoning(ctx);
        case state::implicit: return step_implicit(ctx);
        case state::content_start: return step_content_start(ctx);
        case state::content: return step_content(ctx);
        case state::block: return step_block(ctx);
    }
    return false;
}

// The output opens with a reasoning block (or the prompt opened it).
bool tagged_machine::step_start(context & ctx) {
    if (spec_.reasoning.empty()) {
        state_ = state::content_start;
        return true;
    }
    if (ctx.reasoning_open) {
        style_ = 0;
        state_ = state::reasoning;
        return true;
    }
    size_t cur = skip_space(ctx, ctx.pos);
    if (cur == ctx.buf.size() && !ctx.at_end) return false;
    bool wait = false;
    for (size_t i = 0; i < spec_.reasoning.size(); ++i) {
        size_t c = cur;
        match m = match_literal(ctx, c, spec_.reasoning[i].open);
        if (m == match::yes) {
            ctx.pos = c;
            style_ = i;
            state_ = state::reasoning;
            return true;
        }
        wait = wait || m == match::more;
    }
    if (wait) return false;
    state_ = spec_.implicit_reasoning ? state::implicit : state::content_start;
    return true;
}

bool tagged_machine::step_reasoning(context & ctx) {
    const std::string & close = spec_.reasoning[style_].close;
    size_t hit = ctx.buf.find(close, ctx.pos);
    if (hit != std::string::npos) {
        ctx.out.reasoning(std::string_view(ctx.buf).substr(ctx.pos, hit - ctx.pos));
        ctx.pos = hit + close.size();
        state_ = state::content_start;
        return true;
    }
    std::string_view rest = std::string_view(ctx.buf).substr(ctx.pos);
    size_t hold = ctx.at_end ? 0 : partial_marker_suffix(rest, {close});
    ctx.out.reasoning(rest.substr(0, rest.size() - hold));
    ctx.pos = ctx.buf.size() - hold;
    if (!ctx.at_end) return false;
    state_ = state::content_start;
    return true;
}

// No opening marker: the text waits until a closing marker (it was reasoning) or another marker
// or the end (it is content) decides.
bool tagged_machine::step_implicit(context & ctx) {
    std::vector<std::string> markers = {spec_.reasoning[0].close};
    size_t longest = markers[0].size();
    for (const trigger & t : spec_.triggers) {
        markers.push_back(t.marker);
        longest = std::max(longest, t.marker.size());
    }
    marker_hit hit = find_first_marker(ctx.buf, std::max(ctx.pos, implicit_scanned_), markers);
    if (hit.pos == std::string::npos && !ctx.at_end) {
        implicit_scanned_ = ctx.buf.size() - std::min(ctx.buf.size(), longest - 1);  // no marker starts before
        return false;
    }
    if (hit.pos != std::string::npos && hit.index == 0) {
        ctx.out.reasoning(std::string_view(ctx.buf).substr(ctx.pos, hit.pos - ctx.pos));
        ctx.pos = hit.pos + markers[0].size();
    }
    state_ = state::content_start;
    return true;
}

bool tagged_machine::step_content_start(context & ctx) {
    if (spec_.start_triggers.empty()) {
        state_ = state::content;
        return true;
    }
    size_t cur = skip_space(ctx, ctx.pos);
    if (cur == ctx.buf.size() && !ctx.at_end) return false;
    ctx.out.content(std::string_view(ctx.buf).substr(ctx.pos, cur - ctx.pos));
    ctx.pos = cur;
    for (const trigger & t : spec_.start_triggers) {
        size_t c = cur;
        match m = match_literal(ctx, c, t.marker);
        if (m == match::more) return false;
        if (m == match::yes) {
            start_block(ctx, t, cur);
            return true;
        }
    }
    state_ = state::content;
    return true;
}

// The earliest trigger at or after pos. Each marker's next occurrence (or how far it is known to
// be absent) is kept: the text only grows, so a failed trigger does not make every marker
// search the rest of the text again.
marker_hit tagged_machine::find_trigger(const context & ctx) {
    marker_hit best;
    for (size_t m = 0; m < markers_.size(); ++m) {
        size_t & next = next_[m];
        if (next == std::string::npos || next < ctx.pos) {
            next = ctx.buf.find(markers_[m], std::max(ctx.pos, searched_[m]));
            if (next == std::string::npos) searched_[m] = ctx.buf.size() - std::min(ctx.buf.size(), markers_[m].size() - 1);
        }
        if (next == std::string::npos) continue;
        if (next < best.pos || (next == best.pos && markers_[m].size() > markers_[best.index].size())) {
            best.pos = next;
            best.index = m;
        }
    }
    return best;
}

bool tagged_machine::step_content(context & ctx) {
    marker_hit hit = find_trigger(ctx);
    if (hit.pos != std::string::npos) {
        ctx.out.content(std::string_view(ctx.buf).substr(ctx.pos, hit.pos - ctx.pos));
        const trigger & t = spec_.triggers[hit.index];
        if (t.kind < 0) {
            ctx.pos = hit.pos + t.marker.size();
        } else {
            start_block(ctx, t, hit.pos);
        }
        return true;
    }
    std::string_view rest = std::string_view(ctx.buf).substr(ctx.pos);
    size_t hold = ctx.at_end ? 0 : partial_marker_suffix(rest, markers_);
    ctx.out.content(rest.substr(0, rest.size() - hold));
    ctx.pos = ctx.buf.size() - hold;
    return false;
}

void tagged_machine::start_block(context & ctx, const trigger & t, size_t at) {
    block_ = make_block_(t.kind);
    block_start_ = at;
    marker_len_ = t.marker.size();
    cur_ = t.keep ? at : at + t.marker.size();
    ctx.pos = at;
    state_ = state::block;
}

bool tagged_machine::step_block(context & ctx) {
    progress p = block_->step(ctx, cur_);
    if (p == progress::more && !ctx.at_end) return false;
    if (p == progress::done) {
        ctx.pos = cur_;
    } else if (block_->committed()) {  // a failure (or the end) after calls went out: close them
        ctx.pos = block_->abort(ctx, cur_);
    } else {  // not a call after all: the marker is text, and the text after it is read again
        ctx.out.content(std::string_view(ctx.buf).substr(block_start_, marker_len_));
        ctx.pos = block_start_ + marker_len_;
    }
    block_.reset();
    state_ = state::content;
    return true;
}

}  // namespace toolcall::detail
