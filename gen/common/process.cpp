#include "common/process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "common/error.hpp"
#include "common/format.hpp"

extern char** environ;

namespace kaleido {

namespace fs = std::filesystem;

namespace {

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& kv : extra) replaced = replaced || kv.first == key;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& kv : extra) env.push_back(kv.first + "=" + kv.second);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void write_all(int fd, const char* data, size_t n, const fs::path& log) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw FileError(log.string(), std::string("cannot write the log: ") + std::strerror(errno));
    data += w;
    n -= static_cast<size_t>(w);
  }
}

// What the child reports through the exec-status pipe when it cannot start.
struct StartFailure {
  int step;  // 0: chdir, 1: exec
  int err;
};

}  // namespace

std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string exit_text(const ProcessResult& r) {
  if (r.timed_out) return "timed out after " + fixed(r.seconds, 1) + " s";
  if (r.exit_code > 128) return "killed by signal " + std::to_string(r.exit_code - 128);
  return "exit " + std::to_string(r.exit_code);
}

std::optional<std::string> which(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0 && fs::is_regular_file(name)) return name;
    return std::nullopt;
  }
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      const fs::path candidate = fs::path(dir) / name;
      std::error_code ec;
      if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate, ec)) return candidate.string();
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::string find_program(const std::string& name, const std::string& debian_package) {
  if (auto p = which(name)) return *p;
  throw Error("`" + name + "` was not found on PATH; install the Debian package `" + debian_package +
              "` (apt-get install " + debian_package + ", or run scripts/setup.sh)");
}

std::string tail_lines(const std::string& text, size_t lines) {
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  size_t count = 0;
  while (pos > 0) {
    const size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text;
    if (++count == lines) return text.substr(nl + 1);
    pos = nl;
  }
  return text;
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opt) {
  if (argv.empty()) throw InternalError("run_process: empty command");
  const std::string cmd = command_text(argv);
  const std::optional<std::string> exe = which(argv[0]);
  if (!exe) throw Error("cannot start `" + cmd + "`: " + argv[0] + " was not found or is not executable");
  if (!opt.workdir.empty() && !fs::is_directory(opt.workdir))
    throw Error("cannot start `" + cmd + "`: the folder " + opt.workdir.string() + " does not exist");

  ProcessResult r;
  r.argv = argv;
  r.log = opt.log;
  Fd log_fd;
  if (!opt.log.empty()) {
    log_fd.reset(::open(opt.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (log_fd.get() < 0) throw FileError(opt.log.string(), std::string("cannot write: ") + std::strerror(errno));
  }
  int out_pipe[2], status_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw Error("cannot start `" + cmd + "`: pipe: " + std::strerror(errno));
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) throw Error("cannot start `" + cmd + "`: pipe: " + std::strerror(errno));
  Fd status_read(status_pipe[0]), status_write(status_pipe[1]);

  // Everything the child needs is prepared before fork: after it, in a
  // program with threads, only async-signal-safe calls are allowed.
  std::vector<std::string> args = argv;
  std::vector<std::string> env = environment_with(opt.env);
  std::vector<char*> c_args = c_strings(args);
  std::vector<char*> c_env = c_strings(env);
  const std::string workdir = opt.workdir.string();
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (devnull >= 0) ::close(devnull);
    throw Error("cannot start `" + cmd + "`: fork: " + std::strerror(errno));
  }
  if (pid == 0) {
    // Own process group, so that a timeout ends the program and anything it started.
    ::setpgid(0, 0);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out_write.get(), 1);
    ::dup2(out_write.get(), 2);
    StartFailure f{0, 0};
    if (!workdir.empty() && ::chdir(workdir.c_str()) != 0) {
      f.err = errno;
    } else {
      ::execve(exe->c_str(), c_args.data(), c_env.data());
      f = {1, errno};
    }
    ssize_t ignored = ::write(status_write.get(), &f, sizeof f);
    (void)ignored;
    _exit(127);
  }
  if (devnull >= 0) ::close(devnull);
  ::setpgid(pid, pid);
  out_write.reset();
  status_write.reset();

  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int status = 0;
  auto reap = [&] {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  };
  StartFailure failure{};
  ssize_t got;
  do {
    got = ::read(status_read.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    reap();
    throw Error("cannot start `" + cmd + "`: " + (failure.step == 0 ? "chdir " + workdir + ": " : std::string()) +
                std::strerror(failure.err));
  }

  bool eof = false, exited = false;
  char buf[65536];
  auto take = [&](ssize_t n) {
    r.output.append(buf, static_cast<size_t>(n));
    if (log_fd.get() >= 0) write_all(log_fd.get(), buf, static_cast<size_t>(n), opt.log);
  };
  while (!exited) {
    if (!eof) {
      pollfd p{out_read.get(), POLLIN, 0};
      const int pr = ::poll(&p, 1, 50);
      if (pr > 0) {
        const ssize_t n = ::read(out_read.get(), buf, sizeof buf);
        if (n > 0) take(n);
        else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) eof = true;
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) exited = true;
    else if (w < 0 && errno != EINTR) throw Error("waiting for `" + cmd + "`: " + std::strerror(errno));
    if (!exited && opt.timeout_s > 0 && !r.timed_out && elapsed() > opt.timeout_s) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
  }
  // The program has ended: take what is left in the pipe without waiting for
  // anything it left running in the background.
  ::fcntl(out_read.get(), F_SETFL, O_NONBLOCK);
  for (;;) {
    const ssize_t n = ::read(out_read.get(), buf, sizeof buf);
    if (n > 0) take(n);
    else if (n < 0 && errno == EINTR) continue;
    else break;
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.seconds = elapsed();
  return r;
}

ProcessResult run_checked(const std::vector<std::string>& argv, const ProcessOptions& opt) {
  ProcessResult r = run_process(argv, opt);
  if (r.ok()) return r;
  std::string msg = "`" + command_text(argv) + "` failed (" + exit_text(r) + ")";
  if (!r.log.empty()) msg += "; log: " + r.log.string();
  const std::string tail = tail_lines(r.output, 15);
  if (!tail.empty()) msg += "\n" + tail;
  throw Error(msg);
}

}  // namespace kaleido
