// engine/utf8-stream.h — turns a stream of raw byte pieces (detokenized tokens, which may end in
// the middle of a UTF-8 character) into text that is always valid UTF-8.
//
// Usage:
//   utf8_stream s;
//   for (int32_t id : generated) {
//       std::string text = s.push(tok.token_to_piece(id));   // whole characters only
//       if (!text.empty()) send(text);
//   }
//   send(s.flush());               // the held-back tail, as U+FFFD when it never completed
//
//   size_t n = utf8_valid_prefix_len(bytes);   // bytes[0, n) is complete, valid UTF-8
//
// Rules (the Unicode "maximal subpart" practice):
// - push() returns every complete character of (held tail + piece) and keeps a trailing
//   sequence that is valid so far but incomplete (at most 3 bytes) for the next call;
// - an invalid sequence becomes one U+FFFD (EF BF BD) at once: a stray continuation byte, a byte
//   that never starts a character (C0, C1, F5..FF), a lead byte followed by a byte that cannot
//   continue it, an overlong form (E0 80.., F0 80..), a surrogate (ED A0..) or a code point
//   beyond U+10FFFF (F4 90..). Each maximal valid-so-far prefix of a broken sequence gives one
//   U+FFFD, and decoding resumes at the byte that broke it;
// - flush() returns the held tail as one U+FFFD (a truncated character) and empties the stream.
// So the concatenation of every push() and the final flush() is valid UTF-8, and equals the
// input whenever the input was valid UTF-8. Nothing here throws except std::bad_alloc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

class utf8_stream {
public:
    // Complete characters of the held tail followed by `piece`; may be empty.
    std::string push(std::string_view piece);
    // The same, appended to *out.
    void push(std::string_view piece, std::string * out);
    // The held tail as U+FFFD ("" when none); the stream is empty afterwards.
    std::string flush();
    // Forgets the held tail.
    void reset() { tail_len_ = 0; }
    // Bytes held back (0..3).
    size_t pending() const { return tail_len_; }

private:
    char tail_[4] = {};
    size_t tail_len_ = 0;
};

// Length of the longest prefix of `s` made of complete, valid UTF-8 characters: the text before
// the first invalid or truncated sequence (s.size() when all of s is valid).
size_t utf8_valid_prefix_len(std::string_view s);

// True when all of `s` is complete, valid UTF-8.
inline bool utf8_is_valid(std::string_view s) { return utf8_valid_prefix_len(s) == s.size(); }
