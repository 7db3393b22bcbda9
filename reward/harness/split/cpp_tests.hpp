// judgebox split harness, C++: the runtime of the tests' process, which holds no code of the solution.
// main() makes the process undumpable (the solution's process, same uid, can then neither trace it nor
// read its memory or descriptors), reads the nonce, starts the solution's program (argv after "--",
// in the working folder, its stdin and stdout /dev/null, the request and answer pipes as fds 3 and 4),
// sends the tests' own prints to /dev/null and runs the tests; a call of the solution's function is
// a request and an answer (judgebox_wire), so nothing the solution does can reach this process but
// the values it returns.
#include <csignal>
#include <iostream>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/types.h>
#include <unistd.h>

namespace judgebox_tests {

static std::FILE* requests = nullptr;
static std::FILE* answers = nullptr;
static int marker = -1;

inline bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += (size_t)n;
  }
  return true;
}
static std::string nonce;

[[noreturn]] inline void report(const char* status, int code) {
  std::cout.flush();
  std::string line = "\n" + nonce + " " + status + "\n";
  write_all(marker, line);
  _exit(code);
}
// a failed assert of the tests: its text on stderr (as glibc's assert writes it), then the failure marker
[[noreturn]] inline void failed(const char* expression, const char* status) {
  std::string text = std::string("tests: Assertion `") + expression + "' failed.\n";
  write_all(2, text);
  report(status, 1);
}
// no marker: the run is a runtime error
[[noreturn]] inline void lost(const char* why) {
  std::cout.flush();
  std::string line = std::string("judgebox: ") + why + "\n";
  write_all(2, line);
  _exit(3);
}

template <class... A> std::string request(A&... args) {
  judgebox_wire::Out o = "c";
  int items[] = {0, (judgebox_wire::put(o, args), 0)...};
  (void)items;
  std::string answer;
  if (!judgebox_wire::send(requests, o) || !judgebox_wire::receive(answers, answer))
    lost("the solution's process ended during a call of its function");
  if (!answer.empty() && answer[0] == 'x') {
    std::string what;
    try {
      judgebox_wire::In in{answer.data() + 2, answer.data() + answer.size()};
      if (answer.size() < 2) throw judgebox_wire::Bad();
      judgebox_wire::get(in, what);
    } catch (const judgebox_wire::Bad&) {
      lost("the solution's process answered a call with a malformed exception");
    }
    judgebox_wire::raise_again(answer[1], what);
  }
  if (answer.empty() || answer[0] != 'r') lost("the solution's process answered a call with no value");
  return answer;
}
template <class... A> void written_back(judgebox_wire::In& in, A&... args) {
  int items[] = {0, (judgebox_wire::get_back(in, args), 0)...};
  (void)items;
  if (in.p != in.e) throw judgebox_wire::Bad();
}
template <class R> struct Call {
  template <class... A> static R run(A&... args) {
    std::string answer = request(args...);
    try {
      judgebox_wire::In in{answer.data() + 1, answer.data() + answer.size()};
      typename std::decay<R>::type result{};
      judgebox_wire::get(in, result);
      written_back(in, args...);
      return result;
    } catch (const judgebox_wire::Bad&) {
      lost("the solution's process answered a call with a malformed value");
    }
  }
};
template <> struct Call<void> {
  template <class... A> static void run(A&... args) {
    std::string answer = request(args...);
    try {
      judgebox_wire::In in{answer.data() + 1, answer.data() + answer.size()};
      written_back(in, args...);
    } catch (const judgebox_wire::Bad&) {
      lost("the solution's process answered a call with a malformed value");
    }
  }
};

inline void start(int argc, char** argv) {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  std::getline(std::cin, nonce);
  int sep = 1;
  while (sep < argc && std::string(argv[sep]) != "--") ++sep;
  if (sep + 1 >= argc) lost("no command of the solution's program after --");
  int req[2], ans[2];
  if (pipe2(req, O_CLOEXEC) || pipe2(ans, O_CLOEXEC)) lost("no pipe for the solution's process");
  marker = fcntl(1, F_DUPFD_CLOEXEC, 10);
  int null_ = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (marker < 0 || null_ < 0) lost("no descriptor for the marker");
  std::signal(SIGPIPE, SIG_IGN);
  pid_t pid = fork();
  if (pid < 0) lost("cannot start the solution's process");
  if (pid == 0) {
    int r = fcntl(req[0], F_DUPFD, 20), w = fcntl(ans[1], F_DUPFD, 20);
    if (r < 0 || w < 0 || dup2(null_, 0) < 0 || dup2(null_, 1) < 0 || dup2(r, 3) < 0 || dup2(w, 4) < 0 ||
        chdir("..") != 0)
      _exit(127);
    execv(argv[sep + 1], argv + sep + 1);
    _exit(127);
  }
  close(req[0]);
  close(ans[1]);
  requests = fdopen(req[1], "wb");
  answers = fdopen(ans[0], "rb");
  if (!requests || !answers) lost("no stream for the solution's pipes");
  unsigned seed = 0;  // the tests' rand() is not the solution's to replay (its process starts with the default seed)
  if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed) lost("no random seed");
  std::srand(seed);
  std::cout.flush();
  dup2(null_, 1);  // the tests' own prints
}

}  // namespace judgebox_tests
