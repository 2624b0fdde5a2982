// JSON text to ordered_json in linear time (grammar/json-ordered-read.h): nlohmann's SAX parser
// drives a builder that keeps the containers being read on a stack, each object with a hash
// index of its keys (hashes and places: no key copied).
#include "grammar/json-ordered-read.h"

#include <cmath>
#include <memory>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace {

using ojson = nlohmann::ordered_json;

// Objects up to this many keys find a repeated key by a linear search; larger ones by the index.
constexpr size_t k_linear_keys = 16;

class ordered_builder : public nlohmann::json_sax<ojson> {
public:
    explicit ordered_builder(size_t max_depth) : max_depth_(max_depth) {}

    bool null() override { return add(ojson(nullptr)); }
    bool boolean(bool v) override { return add(ojson(v)); }
    bool number_integer(number_integer_t v) override { return add(ojson(v)); }
    bool number_unsigned(number_unsigned_t v) override { return add(ojson(v)); }
    bool number_float(number_float_t v, const string_t & text) override {
        if (!std::isfinite(v)) {  // as nlohmann's own parser: a number past a double's range is an error
            error_ = "the text is not valid JSON: the number " + text.substr(0, 40) + " is out of range";
            return false;
        }
        return add(ojson(v));
    }
    bool string(string_t & v) override { return add(ojson(std::move(v))); }
    bool binary(binary_t & v) override { return add(ojson::binary(std::move(v))); }
    bool start_object(std::size_t) override { return open(ojson::object()); }
    bool start_array(std::size_t) override { return open(ojson::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t & k) override {
        stack_.back().key = std::move(k);
        return true;
    }
    bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception & e) override {
        error_ = std::string("the text is not valid JSON: ") + e.what();
        return false;
    }

    ojson result() { return std::move(root_); }
    const std::string & error() const { return error_; }

private:
    // The places of an object's keys by their hashes, open addressing in a table kept at most half
    // full: no key is copied (a slot holds the hash and the member's place).
    struct key_index {
        struct slot {
            uint64_t hash = 0;
            uint32_t place = UINT32_MAX;  // UINT32_MAX: empty
        };
        std::vector<slot> slots;
        size_t used = 0;

        static uint64_t hash_of(std::string_view k) { return std::hash<std::string_view>{}(k); }
        // The place of key k among members, or members.size() when it is not there.
        template <class M> size_t find(const M & members, std::string_view k, uint64_t h) const {
            for (size_t i = h & (slots.size() - 1);; i = (i + 1) & (slots.size() - 1)) {
                const slot & s = slots[i];
                if (s.place == UINT32_MAX) return members.size();
                if (s.hash == h && members[s.place].first == k) return s.place;
            }
        }
        void insert(uint64_t h, size_t place) {
            if (2 * (used + 1) > slots.size()) grow();
            put(h, uint32_t(place));
            ++used;
        }

    private:
        void put(uint64_t h, uint32_t place) {
            size_t i = h & (slots.size() - 1);
            while (slots[i].place != UINT32_MAX) i = (i + 1) & (slots.size() - 1);
            slots[i] = {h, place};
        }
        void grow() {
            std::vector<slot> old = std::move(slots);
            slots.assign(old.empty() ? 64 : old.size() * 2, slot{});
            for (const slot & s : old) {
                if (s.place != UINT32_MAX) put(s.hash, s.place);
            }
        }
    };

    struct frame {
        ojson value;
        std::string key;  // the key of the member being read (objects)
        std::unique_ptr<key_index> index;  // past k_linear_keys
    };

    size_t max_depth_;
    std::vector<frame> stack_;
    ojson root_;
    std::string error_;

    bool open(ojson v) {
        if (stack_.size() >= max_depth_) {
            error_ = "nested deeper than " + std::to_string(max_depth_) + " levels at " + pointer();
            return false;
        }
        stack_.push_back({std::move(v), {}, nullptr});
        return true;
    }

    bool close() {
        ojson v = std::move(stack_.back().value);
        stack_.pop_back();
        return add(std::move(v));
    }

    bool add(ojson v) {
        if (stack_.empty()) {
            root_ = std::move(v);
            return true;
        }
        frame & f = stack_.back();
        if (f.value.is_array()) {
            f.value.get_ref<ojson::array_t &>().push_back(std::move(v));
            return true;
        }
        // the object's members as the vector of (key, value) pairs it is: appended without a search
        auto & members = static_cast<ojson::object_t::Container &>(f.value.get_ref<ojson::object_t &>());
        if (members.size() >= k_linear_keys && !f.index) {
            f.index = std::make_unique<key_index>();
            for (size_t i = 0; i < members.size(); ++i) f.index->insert(key_index::hash_of(members[i].first), i);
        }
        size_t found = members.size();
        const uint64_t h = f.index ? key_index::hash_of(f.key) : 0;
        if (f.index) {
            found = f.index->find(members, f.key, h);
        } else {
            for (size_t i = 0; i < members.size(); ++i) {
                if (members[i].first == f.key) found = i;
            }
        }
        if (found < members.size()) {
            members[found].second = std::move(v);  // a repeated key: the first place, the last value
            return true;
        }
        if (f.index) f.index->insert(h, members.size());
        members.emplace_back(std::move(f.key), std::move(v));
        return true;
    }

    // The JSON pointer of the innermost container being read.
    std::string pointer() const {
        std::string out;
        for (const frame & f : stack_) {  // each container's member being read
            out += '/';
            out += f.value.is_object() ? f.key : std::to_string(f.value.size());
            if (out.size() > 200) return out.substr(0, 200) + "…";
        }
        return out.empty() ? "/" : out;
    }
};

}  // namespace

bool json_read_ordered(std::string_view text, size_t max_depth, nlohmann::ordered_json * out, std::string * error) {
    ordered_builder b(max_depth);
    bool ok = false;
    try {
        ok = ojson::sax_parse(text.begin(), text.end(), &b);
    } catch (const nlohmann::json::exception & e) {  // a number out of range, invalid UTF-8 in a string, …
        *error = std::string("the text is not valid JSON: ") + e.what();
        return false;
    }
    if (!ok) {
        *error = b.error().empty() ? "the text is not valid JSON" : b.error();
        return false;
    }
    *out = b.result();
    return true;
}
