#include "equiv/process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace kaleido::equiv {

ProcessRun run_with_timeout(const std::vector<std::string>& argv, const std::filesystem::path& workdir,
                            const std::filesystem::path& log, double timeout_s) {
  if (argv.empty()) throw Error("run_with_timeout: empty command");
  ProcessRun r;
  const auto t0 = std::chrono::steady_clock::now();
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw FileError(log.string(), std::string("cannot write: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    throw Error(std::string("cannot start ") + argv[0] + ": " + std::strerror(errno));
  }
  if (pid == 0) {
    // Own process group, so that a timeout ends the tool and anything it started.
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (::chdir(workdir.c_str()) != 0) _exit(126);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ::setpgid(pid, pid);
  ::close(fd);
  int status = 0;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw Error(std::string("waiting for ") + argv[0] + ": " + std::strerror(errno));
    if (timeout_s > 0 && elapsed() > timeout_s && !r.timed_out) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.seconds = elapsed();
  r.output = read_file(log);
  return r;
}

}  // namespace kaleido::equiv
