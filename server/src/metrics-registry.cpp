// The Prometheus registry: series types, families, registration checks and text rendering.
#include "server/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>

// --- series ---------------------------------------------------------------------------------

void metrics_counter::inc(double v) {
    if (!(v >= 0.0)) return;  // negative or NaN
    value_.fetch_add(v, std::memory_order_relaxed);
}

metrics_histogram::metrics_histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
    for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void metrics_histogram::observe(double v) {
    if (std::isnan(v)) return;
    size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
}

metrics_histogram::snapshot metrics_histogram::read() const {
    snapshot s;
    s.bounds = bounds_;
    s.cumulative.resize(bounds_.size() + 1);
    uint64_t total = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
        total += buckets_[i].load(std::memory_order_relaxed);
        s.cumulative[i] = total;
    }
    s.count = total;  // from the buckets, so that _count always equals the +Inf bucket
    s.sum = sum_.load(std::memory_order_relaxed);
    return s;
}

// --- text helpers ---------------------------------------------------------------------------

std::string metrics_format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {  // an integer below 2^53
        return std::to_string(static_cast<long long>(v));
    }
    char buf[64];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
    return ec == std::errc() ? std::string(buf, p) : std::string("NaN");
}

std::string metrics_escape_label_value(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string metrics_escape_help(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

static bool metrics_name_char(char c, bool first, bool colon) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
    return alpha || (!first && c >= '0' && c <= '9');
}

bool metrics_valid_metric_name(std::string_view s) {
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        if (!metrics_name_char(s[i], i == 0, true)) return false;
    }
    return true;
}

bool metrics_valid_label_name(std::string_view s) {
    if (s.empty() || s.substr(0, 2) == "__") return false;
    for (size_t i = 0; i < s.size(); ++i) {
        if (!metrics_name_char(s[i], i == 0, false)) return false;
    }
    return true;
}

namespace {

// {a="x",b="y"} with `extra` (e.g. le="0.5") last; "" when there are no labels at all.
std::string label_text(const std::vector<std::string> & names, const std::vector<std::string> & values,
                       std::string_view extra = {}) {
    if (names.empty() && extra.empty()) return "";
    std::string out = "{";
    for (size_t i = 0; i < names.size(); ++i) {
        if (i) out += ',';
        out += names[i] + "=\"" + metrics_escape_label_value(values[i]) + "\"";
    }
    if (!extra.empty()) {
        if (!names.empty()) out += ',';
        out += extra;
    }
    return out + "}";
}

const char * type_name(metrics_type t) {
    switch (t) {
        case metrics_type::counter: return "counter";
        case metrics_type::gauge: return "gauge";
        case metrics_type::histogram: return "histogram";
    }
    return "untyped";
}

void render_series(std::string & out, const std::string & name, const std::vector<std::string> & names,
                   const std::vector<std::string> & values, const metrics_counter & c) {
    out += name + label_text(names, values) + " " + metrics_format_value(c.value()) + "\n";
}

void render_series(std::string & out, const std::string & name, const std::vector<std::string> & names,
                   const std::vector<std::string> & values, const metrics_gauge & g) {
    out += name + label_text(names, values) + " " + metrics_format_value(g.value()) + "\n";
}

void render_series(std::string & out, const std::string & name, const std::vector<std::string> & names,
                   const std::vector<std::string> & values, const metrics_histogram & h) {
    metrics_histogram::snapshot s = h.read();
    for (size_t i = 0; i <= s.bounds.size(); ++i) {
        std::string le = "le=\"" + (i < s.bounds.size() ? metrics_format_value(s.bounds[i]) : "+Inf") + "\"";
        out += name + "_bucket" + label_text(names, values, le) + " " + std::to_string(s.cumulative[i]) + "\n";
    }
    out += name + "_sum" + label_text(names, values) + " " + metrics_format_value(s.sum) + "\n";
    out += name + "_count" + label_text(names, values) + " " + std::to_string(s.count) + "\n";
}

}  // namespace

// --- families -------------------------------------------------------------------------------

template <class T>
metrics_family<T>::metrics_family(std::string name, std::string help, metrics_type type,
                                  std::vector<std::string> labels, std::vector<double> bounds)
    : metrics_family_base(std::move(name), std::move(help), type, std::move(labels)), bounds_(std::move(bounds)) {
    if (label_names_.empty()) with_key({});  // an unlabelled family is exported from the start
}

template <class T>
T & metrics_family<T>::with(std::initializer_list<std::string_view> values) {
    std::vector<std::string> key;
    key.reserve(values.size());
    for (std::string_view v : values) key.emplace_back(v);
    return with_key(std::move(key));
}

template <class T>
T & metrics_family<T>::with(const std::vector<std::string> & values) {
    return with_key(values);
}

template <class T>
T & metrics_family<T>::with_key(std::vector<std::string> key) {
    if (key.size() != label_names_.size()) {
        throw std::invalid_argument("metric " + name_ + ": " + std::to_string(key.size()) +
                                    " label values given for " + std::to_string(label_names_.size()) + " labels");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = series_.find(key);
    if (it != series_.end()) return *it->second;
    std::unique_ptr<T> s;
    if constexpr (std::is_same_v<T, metrics_histogram>) {
        s = std::make_unique<T>(bounds_);
    } else {
        s = std::make_unique<T>();
    }
    T & ref = *s;
    series_.emplace(std::move(key), std::move(s));
    return ref;
}

template <class T>
void metrics_family<T>::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto & [key, s] : series_) retired_.push_back(std::move(s));
    series_.clear();
}

template <class T>
void metrics_family<T>::render(std::string & out) const {
    out += "# HELP " + name_ + " " + metrics_escape_help(help_) + "\n";
    out += "# TYPE " + name_ + " " + type_name(type_) + "\n";
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto & [values, s] : series_) render_series(out, name_, label_names_, values, *s);
}

template class metrics_family<metrics_counter>;
template class metrics_family<metrics_gauge>;
template class metrics_family<metrics_histogram>;

// --- registry -------------------------------------------------------------------------------

void metrics_registry::check_new_family(const std::string & name, const std::vector<std::string> & labels,
                                        bool histogram) const {
    if (!metrics_valid_metric_name(name)) throw std::invalid_argument("invalid metric name '" + name + "'");
    for (const std::string & l : labels) {
        if (!metrics_valid_label_name(l) || (histogram && l == "le")) {
            throw std::invalid_argument("metric " + name + ": invalid label name '" + l + "'");
        }
        if (std::count(labels.begin(), labels.end(), l) > 1) {
            throw std::invalid_argument("metric " + name + ": label '" + l + "' given twice");
        }
    }
    // A histogram also owns name_bucket / name_sum / name_count; no family may collide with those.
    auto clashes = [&](const std::string & a, const std::string & b) {
        if (a == b) return true;
        for (const char * suffix : {"_bucket", "_sum", "_count"}) {
            if (a == b + suffix || b == a + suffix) return true;
        }
        return false;
    };
    for (const auto & f : families_) {
        if (clashes(f->name(), name)) throw std::invalid_argument("metric " + name + " clashes with " + f->name());
    }
}

metrics_family<metrics_counter> & metrics_registry::add_counter(std::string name, std::string help,
                                                                std::vector<std::string> label_names) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_new_family(name, label_names, false);
    auto f = std::make_unique<metrics_family<metrics_counter>>(std::move(name), std::move(help), metrics_type::counter,
                                                               std::move(label_names));
    auto & ref = *f;
    families_.push_back(std::move(f));
    return ref;
}

metrics_family<metrics_gauge> & metrics_registry::add_gauge(std::string name, std::string help,
                                                            std::vector<std::string> label_names) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_new_family(name, label_names, false);
    auto f = std::make_unique<metrics_family<metrics_gauge>>(std::move(name), std::move(help), metrics_type::gauge,
                                                             std::move(label_names));
    auto & ref = *f;
    families_.push_back(std::move(f));
    return ref;
}

metrics_family<metrics_histogram> & metrics_registry::add_histogram(std::string name, std::string help,
                                                                    std::vector<double> bounds,
                                                                    std::vector<std::string> label_names) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_new_family(name, label_names, true);
    if (bounds.empty()) throw std::invalid_argument("metric " + name + ": a histogram needs bucket bounds");
    for (size_t i = 0; i < bounds.size(); ++i) {
        if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1]))) {
            throw std::invalid_argument("metric " + name + ": bucket bounds must be finite and strictly increasing");
        }
    }
    auto f = std::make_unique<metrics_family<metrics_histogram>>(
        std::move(name), std::move(help), metrics_type::histogram, std::move(label_names), std::move(bounds));
    auto & ref = *f;
    families_.push_back(std::move(f));
    return ref;
}

std::string metrics_registry::render() const {
    std::string out;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto & f : families_) f->render(out);
    return out;
}
