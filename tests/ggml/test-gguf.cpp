// GGUF reader and writer: the shipped files load, known facts, bit-exact F16/BF16 reference rows,
// write -> read round trips of every value type, mmap / read / header-only agreement, streaming.
#include "ggml/gguf.h"
#include "gguf-test-sample.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string & name) {
    static std::atomic<int> counter{0};
    return (fs::path(testing::TempDir()) /
            ("inferd-gguf-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name))
        .string();
}

std::unique_ptr<gguf_file> open_or_fail(const std::string & path, gguf_open_options o = {}) {
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_file::open(path, o, &f);
    EXPECT_TRUE(r) << r.message;
    return f;
}

std::vector<std::string> gguf_files_in(const std::string & dir) {
    std::vector<std::string> files;
    for (const auto & e : fs::directory_iterator(dir)) {
        if (e.path().extension() == ".gguf") files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

void expect_same_headers(const gguf_file & a, const gguf_file & b) {
    ASSERT_EQ(a.metadata().size(), b.metadata().size());
    for (size_t i = 0; i < a.metadata().size(); ++i) {
        EXPECT_EQ(a.metadata().at(i).key, b.metadata().at(i).key);
        EXPECT_TRUE(a.metadata().at(i).value == b.metadata().at(i).value) << a.metadata().at(i).key;
    }
    ASSERT_EQ(a.n_tensors(), b.n_tensors());
    for (size_t i = 0; i < a.n_tensors(); ++i) {
        const gguf_tensor_info & x = a.tensor(i);
        const gguf_tensor_info & y = b.tensor(i);
        EXPECT_EQ(x.name, y.name);
        EXPECT_EQ(x.type, y.type);
        EXPECT_EQ(x.n_dims, y.n_dims);
        for (int d = 0; d < GGML_MAX_DIMS; ++d) EXPECT_EQ(x.ne[d], y.ne[d]) << x.name;
        EXPECT_EQ(x.size, y.size);
        EXPECT_EQ(x.n_elements, y.n_elements);
    }
}

void expect_same_tensor_bytes(const gguf_file & a, const gguf_file & b) {
    ASSERT_EQ(a.n_tensors(), b.n_tensors());
    for (size_t i = 0; i < a.n_tensors(); ++i) {
        const void * pa = a.tensor_data(a.tensor(i));
        const void * pb = b.tensor_data(b.tensor(i));
        ASSERT_TRUE(pa && pb);
        EXPECT_EQ(0, std::memcmp(pa, pb, a.tensor(i).size)) << a.tensor(i).name;
    }
}

}  // namespace

// ---- the shipped files ----

TEST(GgufFiles, EveryShippedFileLoads) {
    INFERD_REQUIRE_TESTDATA(dir);
    int n_files = 0;
    for (const char * sub : {"/models", "/vocab"}) {
        for (const std::string & path : gguf_files_in(dir + sub)) {
            SCOPED_TRACE(path);
            ++n_files;
            auto f = open_or_fail(path);
            ASSERT_TRUE(f);
            EXPECT_TRUE(f->version() == 2 || f->version() == 3);
            EXPECT_EQ(f->file_size(), fs::file_size(path));
            EXPECT_TRUE(f->metadata().contains("general.architecture"));
            size_t n_tokens = 0;
            EXPECT_TRUE(f->metadata().get_array_size("tokenizer.ggml.tokens", &n_tokens));
            EXPECT_GT(n_tokens, 0u);
            EXPECT_EQ(f->n_tensors() > 0, std::string(sub) == "/models");
            for (const gguf_tensor_info & t : f->tensors()) {
                const auto * p = static_cast<const uint8_t *>(f->tensor_data(t));
                ASSERT_NE(p, nullptr);
                EXPECT_EQ(t.offset % f->alignment(), 0u);
                EXPECT_LE(f->data_offset() + t.offset + t.size, f->file_size());
                EXPECT_EQ(f->find_tensor(t.name), &t);
            }
            // The header alone (plain reads of a growing prefix) gives the same header.
            gguf_open_options header_only;
            header_only.load_tensor_data = false;
            auto h = open_or_fail(path, header_only);
            ASSERT_TRUE(h);
            expect_same_headers(*f, *h);
            EXPECT_FALSE(h->has_tensor_data() && h->n_tensors() > 0);
        }
    }
    EXPECT_GE(n_files, 20);
}

TEST(GgufFiles, TinyLlamaFacts) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto f = open_or_fail(dir + "/models/tiny-llama-f32.gguf");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->version(), 3u);
    EXPECT_EQ(f->alignment(), 32u);
    std::string arch;
    ASSERT_TRUE(f->metadata().get_string("general.architecture", &arch));
    EXPECT_EQ(arch, "llama");
    int64_t n_embd = 0;
    ASSERT_TRUE(f->metadata().get_int("llama.embedding_length", &n_embd));
    EXPECT_EQ(n_embd, 256);
    uint64_t n_layer = 0;
    ASSERT_TRUE(f->metadata().get_uint("llama.block_count", &n_layer));
    EXPECT_EQ(n_layer, 4u);
    double eps = 0;
    ASSERT_TRUE(f->metadata().get_float("llama.attention.layer_norm_rms_epsilon", &eps));
    EXPECT_FLOAT_EQ(float(eps), 1e-5f);
    bool add_bos = false;
    ASSERT_TRUE(f->metadata().get_bool("tokenizer.ggml.add_bos_token", &add_bos));
    EXPECT_TRUE(add_bos);

    const gguf_value * tokens = nullptr;
    ASSERT_TRUE(f->metadata().get_array("tokenizer.ggml.tokens", &tokens));
    EXPECT_EQ(tokens->array_type(), gguf_value_type::string);
    ASSERT_EQ(tokens->array_size(), 4096u);
    EXPECT_EQ(tokens->array_strings()[1], "<s>");
    std::vector<float> scores;
    EXPECT_TRUE(f->metadata().find("tokenizer.ggml.scores")->array_to_f32(&scores));
    EXPECT_EQ(scores.size(), 4096u);
    std::vector<int64_t> token_types;
    EXPECT_TRUE(f->metadata().find("tokenizer.ggml.token_type")->array_to_i64(&token_types));
    EXPECT_EQ(token_types.size(), 4096u);

    EXPECT_EQ(f->n_tensors(), 39u);  // 4 layers x 9 + token_embd, output_norm, output
    const gguf_tensor_info * emb = f->find_tensor("token_embd.weight");
    ASSERT_NE(emb, nullptr);
    EXPECT_EQ(emb->type, GGML_TYPE_F32);
    EXPECT_EQ(emb->n_dims, 2u);
    EXPECT_EQ(emb->ne[0], 256);
    EXPECT_EQ(emb->ne[1], 4096);
    EXPECT_EQ(emb->size, size_t(256) * 4096 * 4);
    EXPECT_EQ(emb->n_rows(), 4096);
    EXPECT_EQ(f->find_tensor("no.such.tensor"), nullptr);

    // Typed getter errors name the key and the stored type.
    std::string s;
    gguf_result r = f->metadata().get_string("llama.block_count", &s);
    EXPECT_EQ(r.status, GGUF_ERROR_TYPE);
    EXPECT_NE(r.message.find("llama.block_count"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("u32"), std::string::npos) << r.message;
    r = f->metadata().get_int("no.such.key", &n_embd);
    EXPECT_EQ(r.status, GGUF_ERROR_NOT_FOUND);
    EXPECT_NE(r.message.find("no.such.key"), std::string::npos);
}

TEST(GgufFiles, F16AndBf16ReferenceRowsBitExact) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const char * name : {"tiny-llama-f16.gguf", "tiny-llama-bf16.gguf"}) {
        SCOPED_TRACE(name);
        auto f = open_or_fail(dir + "/models/" + name);
        ASSERT_TRUE(f);
        const gguf_tensor_info * t = f->find_tensor("output.weight");
        ASSERT_NE(t, nullptr);
        const std::vector<uint8_t> ref =
            gguf_test_read_file(dir + "/reference/dequant/" + name + ".output.weight.f32");
        ASSERT_EQ(ref.size(), size_t(4) * 256 * sizeof(float));
        const ggml_type_traits & tt = ggml_get_type_traits(t->type);
        ASSERT_NE(tt.to_float, nullptr);
        std::vector<float> out(4 * 256);
        tt.to_float(f->tensor_data(*t), out.data(), int64_t(out.size()));
        EXPECT_EQ(0, std::memcmp(out.data(), ref.data(), ref.size()));
    }
}

TEST(GgufFiles, MmapReadAndOptionsGiveTheSameBytes) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string path = dir + "/models/tiny-llama-q4_k_m.gguf";
    auto mapped = open_or_fail(path);
    gguf_open_options ro;
    ro.mode = gguf_load_mode::read;
    auto read = open_or_fail(path, ro);
    gguf_open_options po;
    po.populate = true;
    po.will_need = true;
    auto populated = open_or_fail(path, po);
    ASSERT_TRUE(mapped && read && populated);
    EXPECT_TRUE(mapped->is_mmapped());
    EXPECT_FALSE(read->is_mmapped());
    EXPECT_TRUE(populated->is_mmapped());
    expect_same_headers(*mapped, *read);
    expect_same_tensor_bytes(*mapped, *read);
    expect_same_tensor_bytes(*mapped, *populated);
    // The plain-read buffer keeps tensor data aligned like the mapping does.
    for (const gguf_tensor_info & t : read->tensors()) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(read->tensor_data(t)) % 32, 0u) << t.name;
    }
    const std::vector<uint8_t> file = gguf_test_read_file(path);
    const gguf_tensor_info * out = mapped->find_tensor("output.weight");
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(0, std::memcmp(mapped->tensor_data(*out), file.data() + mapped->data_offset() + out->offset, out->size));
}

// In a child process without privileges (root would lock regardless of the limit) and with a
// 4 KiB RLIMIT_MEMLOCK: the open succeeds and warns, naming the limit. Exit codes tell the parent.
int mlock_refusal_child(const std::string & path) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 10;
    rlimit lim{};
    if (::getrlimit(RLIMIT_MEMLOCK, &lim) != 0) return 11;
    lim.rlim_cur = 4096;  // lowering the soft limit is always allowed
    if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0) return 11;
    gguf_open_options o;
    o.mlock = true;
    std::unique_ptr<gguf_file> f;
    if (!gguf_file::open(path, o, &f)) return 1;       // a refused mlock must not fail the open
    if (!f->tensor_data(f->tensor(0))) return 2;
    for (const std::string & w : f->warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
    if (f->warnings().size() != 1) return 3;
    const std::string & w = f->warnings()[0];
    if (w.find("mlock") == std::string::npos || w.find("RLIMIT_MEMLOCK is 4096 bytes") == std::string::npos) return 4;
    return 0;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool k_asan = true;  // ASan intercepts mlock and makes it a successful no-op
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool k_asan = true;
#else
constexpr bool k_asan = false;
#endif
#else
constexpr bool k_asan = false;
#endif

TEST(GgufFiles, MlockRefusedByTheLimitIsAWarning) {
    INFERD_REQUIRE_TESTDATA(dir);
    if (k_asan) GTEST_SKIP() << "AddressSanitizer turns mlock into a no-op: the refusal cannot happen";
    const std::string path = dir + "/models/stories260K-f32.gguf";
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(mlock_refusal_child(path));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 10) GTEST_SKIP() << "cannot drop root privileges to test a refused mlock";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: open failed, 2: no data, 3: no single warning, 4: wrong text";
}

TEST(GgufFiles, OpenErrorsNameThePath) {
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_file::open("/nonexistent/dir/model.gguf", {}, &f);
    EXPECT_EQ(r.status, GGUF_ERROR_IO);
    EXPECT_NE(r.message.find("/nonexistent/dir/model.gguf"), std::string::npos);
    EXPECT_EQ(f, nullptr);
    r = gguf_file::open(testing::TempDir(), {}, &f);
    EXPECT_EQ(r.status, GGUF_ERROR_IO);
    const std::string empty = temp_path("empty.gguf");
    std::ofstream(empty).close();
    r = gguf_file::open(empty, {}, &f);
    EXPECT_EQ(r.status, GGUF_ERROR_FORMAT);
    EXPECT_NE(r.message.find("empty"), std::string::npos);
    fs::remove(empty);
}

// ---- write -> read ----

TEST(GgufRoundTrip, EveryValueTypeAndTensorBytes) {
    gguf_test_sample s;
    const std::vector<uint8_t> bytes = s.bytes();
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_test_parse(bytes, &f);
    ASSERT_TRUE(r) << r.message;
    EXPECT_EQ(f->version(), 3u);
    const gguf_metadata & md = s.w.metadata();
    ASSERT_EQ(f->metadata().size(), md.size());
    for (size_t i = 0; i < md.size(); ++i) {
        EXPECT_EQ(f->metadata().at(i).key, md.at(i).key);
        EXPECT_TRUE(f->metadata().at(i).value == md.at(i).value)
            << md.at(i).key << ": " << f->metadata().at(i).value.to_string() << " vs " << md.at(i).value.to_string();
    }
    ASSERT_EQ(f->n_tensors(), s.w.n_tensors());
    for (size_t i = 0; i < f->n_tensors(); ++i) {
        const gguf_tensor_info & t = f->tensor(i);
        EXPECT_EQ(t.name, s.w.tensor(i).name);
        EXPECT_EQ(t.type, s.w.tensor(i).type);
        EXPECT_EQ(t.offset, s.w.tensor(i).offset);
        EXPECT_EQ(t.size, s.w.tensor(i).size);
    }
    EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("a")), s.a.data(), 24));
    EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("b")), s.b.data(), 10));
    EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("c")), s.c.data(), s.c.size()));
    EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("d")), s.d.data(), 64));
    EXPECT_EQ(f->find_tensor("c")->size, 136u);
    EXPECT_EQ(f->find_tensor("empty")->size, 0u);
    EXPECT_EQ(f->find_tensor("d")->n_dims, 4u);

    // Typed access on the read values.
    int64_t i = 0;
    uint64_t u = 0;
    double x = 0;
    EXPECT_TRUE(f->metadata().get_int("v.i8", &i) && i == -5);
    EXPECT_TRUE(f->metadata().get_int("v.u32", &i) && i == 4000000000);
    EXPECT_FALSE(f->metadata().get_int("v.u64", &i));  // does not fit int64
    EXPECT_TRUE(f->metadata().get_uint("v.u64", &u) && u == 0xfedcba9876543210ull);
    EXPECT_EQ(f->metadata().get_uint("v.i16", &u).status, GGUF_ERROR_TYPE);  // negative
    EXPECT_TRUE(f->metadata().get_float("v.f32", &x) && x == 3.25);
    EXPECT_TRUE(f->metadata().get_float("v.f64", &x) && x == -1e300);
    const gguf_value * nested = f->metadata().find("a.nested");
    ASSERT_TRUE(nested && nested->array_type() == gguf_value_type::array);
    ASSERT_EQ(nested->array_size(), 4u);
    EXPECT_TRUE(nested->array_values()[0].array_get_int(2, &i) && i == 3);
    EXPECT_TRUE(nested->array_values()[1].array_get_float(0, &x) && x == 0.125);
    EXPECT_EQ(nested->array_values()[2].array_strings()[1], "q");
    EXPECT_EQ(nested->array_values()[3].array_values()[0].array_size(), 0u);
    bool b = false;
    EXPECT_TRUE(f->metadata().find("a.bool")->array_get_bool(2, &b) && b);
    EXPECT_TRUE(f->metadata().find("a.u64")->array_get_uint(1, &u) && u == ~0ull);
    EXPECT_FALSE(f->metadata().find("a.u64")->array_get_int(1, &i));
    EXPECT_EQ(f->metadata().find("v.str")->to_string(), "\"h\xc3\xa9llo\\n\\\"world\\\"\"");
}

TEST(GgufRoundTrip, Version2ReadsLikeVersion3) {
    gguf_test_sample s;
    std::vector<uint8_t> bytes = s.bytes();
    bytes[4] = 2;
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_test_parse(bytes, &f);
    ASSERT_TRUE(r) << r.message;
    EXPECT_EQ(f->version(), 2u);
    EXPECT_EQ(f->n_tensors(), s.w.n_tensors());
}

TEST(GgufRoundTrip, FileStreamAndBufferAgree) {
    gguf_test_sample s;
    const std::vector<uint8_t> bytes = s.bytes();
    const std::string whole = temp_path("whole.gguf");
    const std::string streamed = temp_path("streamed.gguf");
    ASSERT_TRUE(s.w.write_file(whole));
    EXPECT_EQ(gguf_test_read_file(whole), bytes);

    gguf_test_sample t;  // the same content, written tensor by tensor
    ASSERT_TRUE(t.w.stream_begin(streamed));
    const void * data[] = {t.a.data(), t.b.data(), t.c.data(), nullptr, t.d.data(), t.e.data()};
    for (size_t i = 0; i < t.w.n_tensors(); ++i) {
        EXPECT_EQ(t.w.stream_next_tensor(), i);
        gguf_result r = t.w.stream_tensor_data(data[i], t.w.tensor(i).size);
        ASSERT_TRUE(r) << r.message;
    }
    ASSERT_TRUE(t.w.stream_end());
    EXPECT_EQ(gguf_test_read_file(streamed), bytes);

    for (gguf_load_mode mode : {gguf_load_mode::mmap, gguf_load_mode::read}) {
        gguf_open_options o;
        o.mode = mode;
        auto f = open_or_fail(streamed, o);
        ASSERT_TRUE(f);
        std::unique_ptr<gguf_file> g;
        ASSERT_TRUE(gguf_test_parse(bytes, &g));
        expect_same_headers(*f, *g);
        expect_same_tensor_bytes(*f, *g);
    }
    fs::remove(whole);
    fs::remove(streamed);
}

TEST(GgufRoundTrip, AlignmentIsKeptAndApplied) {
    gguf_test_sample s;
    EXPECT_EQ(s.w.set_alignment(3).status, GGUF_ERROR_INVALID_ARG);
    ASSERT_TRUE(s.w.set_alignment(256));
    EXPECT_EQ(s.w.alignment(), 256u);
    const std::vector<uint8_t> bytes = s.bytes();
    std::unique_ptr<gguf_file> f;
    ASSERT_TRUE(gguf_test_parse(bytes, &f));
    EXPECT_EQ(f->alignment(), 256u);
    EXPECT_EQ(f->data_offset() % 256, 0u);
    for (const gguf_tensor_info & t : f->tensors()) EXPECT_EQ(t.offset % 256, 0u) << t.name;
    EXPECT_EQ(0, std::memcmp(f->tensor_data(*f->find_tensor("c")), s.c.data(), s.c.size()));
}

TEST(GgufRoundTrip, ShippedModelsRewriteByteForByte) {
    // The writer lays files out exactly as the tool that wrote the shipped models did: copying
    // a model's metadata and tensors gives back the identical file.
    INFERD_REQUIRE_TESTDATA(dir);
    for (const std::string & path : gguf_files_in(dir + "/models")) {
        SCOPED_TRACE(path);
        auto f = open_or_fail(path);
        ASSERT_TRUE(f);
        gguf_writer w;
        w.metadata() = f->metadata();
        for (const gguf_tensor_info & t : f->tensors()) ASSERT_TRUE(w.add_tensor(t, f->tensor_data(t)));
        std::vector<uint8_t> bytes;
        ASSERT_TRUE(w.write_to_buffer(&bytes));
        ASSERT_EQ(bytes.size(), f->file_size());
        const std::vector<uint8_t> original = gguf_test_read_file(path);
        EXPECT_TRUE(bytes == original);
    }
}

TEST(GgufRoundTrip, ChangedMetadataIsReadBack) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto f = open_or_fail(dir + "/models/tiny-qwen2-q4_k_m.gguf");
    ASSERT_TRUE(f);
    gguf_writer w;
    w.metadata() = f->metadata();
    w.metadata().set("general.name", gguf_value::from_string("rewritten"));
    w.metadata().set("general.file_type", gguf_value::from_u32(7));
    for (const gguf_tensor_info & t : f->tensors()) ASSERT_TRUE(w.add_tensor(t, f->tensor_data(t)));
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(w.write_to_buffer(&bytes));
    std::unique_ptr<gguf_file> g;
    gguf_result r = gguf_test_parse(bytes, &g);
    ASSERT_TRUE(r) << r.message;
    std::string name;
    ASSERT_TRUE(g->metadata().get_string("general.name", &name));
    EXPECT_EQ(name, "rewritten");
    int64_t ftype = 0;
    ASSERT_TRUE(g->metadata().get_int("general.file_type", &ftype));
    EXPECT_EQ(ftype, 7);
    EXPECT_EQ(g->metadata().size(), f->metadata().size());
    expect_same_tensor_bytes(*f, *g);
}

// ---- metadata and writer API ----

TEST(GgufMetadata, SetReplaceRemoveKeepOrder) {
    gguf_metadata md;
    md.set("a", gguf_value::from_u32(1));
    md.set("b", gguf_value::from_string("x"));
    md.set("c", gguf_value::from_bool(false));
    md.set("a", gguf_value::from_i64(-9));  // replaced in place
    ASSERT_EQ(md.size(), 3u);
    EXPECT_EQ(md.at(0).key, "a");
    EXPECT_EQ(md.at(0).value.type(), gguf_value_type::int64);
    EXPECT_TRUE(md.remove("b"));
    EXPECT_FALSE(md.remove("b"));
    ASSERT_EQ(md.size(), 2u);
    EXPECT_EQ(md.at(1).key, "c");
    EXPECT_NE(md.find("c"), nullptr);
    EXPECT_EQ(md.find("b"), nullptr);
    int64_t v = 0;
    EXPECT_TRUE(md.get_int("a", &v));
    EXPECT_EQ(v, -9);
    size_t n = 0;
    EXPECT_EQ(md.get_array_size("a", &n).status, GGUF_ERROR_TYPE);
    EXPECT_FALSE(gguf_value::from_f32(1.0f) == gguf_value::from_f64(1.0));
    EXPECT_TRUE(gguf_value::from_array_strings({"a"}) == gguf_value::from_array_strings({"a"}));
}

TEST(GgufWriter, RejectsBadTensorsAndMisuse) {
    gguf_writer w;
    const uint8_t buf[64] = {};
    EXPECT_EQ(w.add_tensor("", GGML_TYPE_F32, {4}).status, GGUF_ERROR_INVALID_ARG);
    EXPECT_EQ(w.add_tensor(std::string(64, 'n'), GGML_TYPE_F32, {4}).status, GGUF_ERROR_INVALID_ARG);
    EXPECT_EQ(w.add_tensor("q", GGML_TYPE_Q4_0, {33}).status, GGUF_ERROR_INVALID_ARG);
    EXPECT_EQ(w.add_tensor("neg", GGML_TYPE_F32, {4, -1}).status, GGUF_ERROR_INVALID_ARG);
    EXPECT_EQ(w.add_tensor("five", GGML_TYPE_F32, {1, 1, 1, 1, 1}).status, GGUF_ERROR_INVALID_ARG);
    EXPECT_EQ(w.add_tensor("bad", ggml_type(4), {4}).status, GGUF_ERROR_INVALID_ARG);
    EXPECT_EQ(w.add_tensor("huge", GGML_TYPE_F32, {int64_t(1) << 62, int64_t(1) << 62}).status, GGUF_ERROR_INVALID_ARG);
    ASSERT_TRUE(w.add_tensor("t", GGML_TYPE_F32, {16}, buf));
    gguf_result r = w.add_tensor("t", GGML_TYPE_F32, {16}, buf);
    EXPECT_EQ(r.status, GGUF_ERROR_INVALID_ARG);
    EXPECT_NE(r.message.find("duplicate"), std::string::npos);
    ASSERT_TRUE(w.add_tensor("u", GGML_TYPE_F32, {16}));  // no data: only streamable
    std::vector<uint8_t> out;
    r = w.write_to_buffer(&out);
    EXPECT_EQ(r.status, GGUF_ERROR_INVALID_ARG);
    EXPECT_NE(r.message.find("'u'"), std::string::npos);

    // general.alignment set directly to a bad value is caught when the header is built.
    w.metadata().set(GGUF_KEY_GENERAL_ALIGNMENT, gguf_value::from_u32(48));
    EXPECT_EQ(w.build_header(&out).status, GGUF_ERROR_INVALID_ARG);
    w.metadata().remove(GGUF_KEY_GENERAL_ALIGNMENT);

    // Nesting deeper than the reader accepts is refused.
    gguf_value deep = gguf_value::from_array_i32({});
    for (int d = 0; d < GGUF_MAX_ARRAY_DEPTH; ++d) deep = gguf_value::from_array_arrays({deep});
    w.metadata().set("deep", deep);
    EXPECT_EQ(w.build_header(&out).status, GGUF_ERROR_INVALID_ARG);
    w.metadata().remove("deep");

    const std::string path = temp_path("misuse.gguf");
    EXPECT_EQ(w.stream_tensor_data(buf, 64).status, GGUF_ERROR_INVALID_ARG);  // not begun
    ASSERT_TRUE(w.stream_begin(path));
    EXPECT_EQ(w.add_tensor("late", GGML_TYPE_F32, {4}).status, GGUF_ERROR_INVALID_ARG);
    r = w.stream_tensor_data(buf, 60);
    EXPECT_EQ(r.status, GGUF_ERROR_INVALID_ARG);
    EXPECT_NE(r.message.find("64"), std::string::npos) << r.message;
    ASSERT_TRUE(w.stream_tensor_data(buf, 64));
    r = w.stream_end();  // 'u' is missing
    EXPECT_EQ(r.status, GGUF_ERROR_INVALID_ARG);
    EXPECT_NE(r.message.find("'u'"), std::string::npos) << r.message;
    EXPECT_EQ(w.stream_end().status, GGUF_ERROR_INVALID_ARG);  // already closed
    fs::remove(path);
    EXPECT_EQ(w.stream_begin("/nonexistent/dir/x.gguf").status, GGUF_ERROR_IO);
}
