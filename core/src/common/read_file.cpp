// Reading a named file whole, within limits. See read_file.h.

#include "dstudio/common/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace dstudio {

std::string byte_size_text(std::uint64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024.0 && u < 3) v /= 1024.0, ++u;
  char text[32];
  std::snprintf(text, sizeof text, v < 10 && v != static_cast<int>(v) ? "%.1f %s" : "%.0f %s", v,
                units[u]);
  return text;
}

std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const std::string where = path.string();
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int why = errno;
    if (why == ENOENT) throw Error(where + ": no such file");
    throw Error(where + ": cannot be opened (" + std::strerror(why) + ")");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(where + ": cannot be read (" + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) throw Error(where + ": is a folder, not a file");
  if (!S_ISREG(st.st_mode))
    throw Error(where + ": is not a regular file (" +
                (S_ISFIFO(st.st_mode)   ? "a FIFO"
                 : S_ISCHR(st.st_mode)  ? "a character device"
                 : S_ISBLK(st.st_mode)  ? "a block device"
                 : S_ISSOCK(st.st_mode) ? "a socket"
                                        : "a special file") +
                "); only a file's content can be read");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    throw Error(where + ": is " + byte_size_text(size) + ", more than the " +
                byte_size_text(max_bytes) + " such a file can be");
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(where + ": cannot be read (" + std::strerror(errno) + ")");
    if (n == 0) break;  // shrank while being read
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace dstudio
