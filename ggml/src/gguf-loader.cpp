// GGUF loader: gets a file's bytes (mmap with populate / WILLNEED / mlock options, or plain
// reads, or only the header) and hands them to the parser.
#include "gguf-impl.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

class gguf_loader {
public:
    static gguf_result map(int fd, size_t size, const gguf_open_options & opts, gguf_file * f);
    static gguf_result read_whole(int fd, size_t size, const gguf_open_options & opts, gguf_file * f);
    static gguf_result read_header(int fd, size_t size, gguf_file * f);

private:
    static void lock_bytes(gguf_file * f, void * addr, size_t size);
};

namespace {

constexpr size_t k_header_first_read = size_t(1) << 20;

std::string errno_text(int e) { return std::strerror(e); }

gguf_result io_error(std::string msg) { return gguf_result::error(GGUF_ERROR_IO, std::move(msg)); }

// Reads exactly n bytes at offset (retrying short reads and EINTR).
gguf_result read_fully(int fd, uint8_t * dst, size_t n, size_t offset) {
    size_t done = 0;
    while (done < n) {
        const ssize_t got = ::pread(fd, dst + done, n - done, off_t(offset + done));
        if (got < 0) {
            if (errno == EINTR) continue;
            return io_error("read failed at offset " + std::to_string(offset + done) + ": " + errno_text(errno));
        }
        if (got == 0) {
            return io_error("unexpected end of file at offset " + std::to_string(offset + done) +
                            " (the file shrank while being read)");
        }
        done += size_t(got);
    }
    return gguf_result::ok();
}

struct fd_guard {
    int fd;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

void gguf_loader::lock_bytes(gguf_file * f, void * addr, size_t size) {
    if (::mlock(addr, size) == 0) {
        f->map_locked_ = true;
        return;
    }
    const int e = errno;
    std::string msg = "mlock of " + gguf_format_bytes(size) + " refused (" + errno_text(e) + ")";
    rlimit lim{};
    if (::getrlimit(RLIMIT_MEMLOCK, &lim) == 0) {
        msg += lim.rlim_cur == RLIM_INFINITY ? std::string("; RLIMIT_MEMLOCK is unlimited")
                                             : "; RLIMIT_MEMLOCK is " + gguf_format_bytes(uint64_t(lim.rlim_cur));
    }
    msg += ": raise the limit (ulimit -l, LimitMEMLOCK= for systemd, --ulimit memlock for containers) to keep the "
           "model in RAM; continuing without mlock";
    f->warnings_.push_back(msg);
}

gguf_result gguf_loader::map(int fd, size_t size, const gguf_open_options & opts, gguf_file * f) {
    const int flags = MAP_PRIVATE | (opts.populate ? MAP_POPULATE : 0);
    void * addr = ::mmap(nullptr, size, PROT_READ, flags, fd, 0);
    if (addr == MAP_FAILED) return io_error("mmap failed: " + errno_text(errno));
    f->map_addr_ = addr;  // unmapped by ~gguf_file, also when parsing fails
    f->map_size_ = size;
    bool need_more = false;
    const auto * bytes = static_cast<const uint8_t *>(addr);
    if (gguf_result r = gguf_parser::parse(bytes, size, size, f, &need_more); !r) return r;
    f->data_ = bytes;
    if (opts.will_need && ::madvise(addr, size, MADV_WILLNEED) != 0) {
        f->warnings_.push_back("madvise(MADV_WILLNEED) failed: " + errno_text(errno));
    }
    if (opts.mlock) lock_bytes(f, addr, size);
    return gguf_result::ok();
}

gguf_result gguf_loader::read_whole(int fd, size_t size, const gguf_open_options & opts, gguf_file * f) {
    // Rounded up to a multiple of 64 so that aligned_alloc accepts it; tensor data stays aligned
    // to min(alignment, 64) bytes.
    const size_t alloc = (size + 63) & ~size_t(63);
    auto * buf = static_cast<uint8_t *>(std::aligned_alloc(64, alloc));
    if (!buf) return io_error("cannot allocate " + gguf_format_bytes(size) + " to read the file");
    f->owned_ = std::unique_ptr<uint8_t[], void (*)(void *)>(buf, std::free);
    if (gguf_result r = read_fully(fd, buf, size, 0); !r) return r;
    bool need_more = false;
    if (gguf_result r = gguf_parser::parse(buf, size, size, f, &need_more); !r) return r;
    f->data_ = buf;
    if (opts.mlock) lock_bytes(f, buf, alloc);
    return gguf_result::ok();
}

gguf_result gguf_loader::read_header(int fd, size_t size, gguf_file * f) {
    std::vector<uint8_t> buf;
    size_t avail = 0;
    size_t want = std::min(size, k_header_first_read);
    for (;;) {
        buf.resize(want);
        if (gguf_result r = read_fully(fd, buf.data() + avail, want - avail, avail); !r) return r;
        avail = want;
        bool need_more = false;
        gguf_result r = gguf_parser::parse(buf.data(), avail, size, f, &need_more);
        if (r || !need_more || avail == size) return r;
        want = size - avail < 3 * avail ? size : 4 * avail;  // grow geometrically up to the file
    }
}

gguf_file::~gguf_file() {
    if (map_addr_) {
        if (map_locked_) ::munlock(map_addr_, map_size_);
        ::munmap(map_addr_, map_size_);
    } else if (map_locked_ && owned_) {
        ::munlock(owned_.get(), (file_size_ + 63) & ~size_t(63));
    }
}

gguf_result gguf_file::open(const std::string & path, const gguf_open_options & opts, std::unique_ptr<gguf_file> * out) {
    fd_guard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    const std::string who = "'" + path + "': ";
    if (fd.fd < 0) return io_error(who + "cannot open: " + errno_text(errno));
    struct stat st{};
    if (::fstat(fd.fd, &st) != 0) return io_error(who + "cannot stat: " + errno_text(errno));
    if (!S_ISREG(st.st_mode)) return io_error(who + "not a regular file");
    const size_t size = size_t(st.st_size);
    if (size == 0) return gguf_result::error(GGUF_ERROR_FORMAT, who + "the file is empty (0 bytes): not a GGUF file");

    std::unique_ptr<gguf_file> f(new gguf_file);
    gguf_result r;
    if (!opts.load_tensor_data) {
        r = gguf_loader::read_header(fd.fd, size, f.get());
    } else if (opts.mode == gguf_load_mode::mmap) {
        r = gguf_loader::map(fd.fd, size, opts, f.get());
        if (!r && r.status == GGUF_ERROR_IO) {
            const std::string why = r.message;
            f.reset(new gguf_file);
            f->warnings_.push_back(why + ": reading the file into memory instead");
            r = gguf_loader::read_whole(fd.fd, size, opts, f.get());
        }
    } else {
        r = gguf_loader::read_whole(fd.fd, size, opts, f.get());
    }
    if (!r) {
        r.message = who + r.message;
        return r;
    }
    *out = std::move(f);
    return r;
}
