
// judgebox split harness, Rust: the runtime of the tests' process, which holds no code of the solution
// (its binary is execute-only, so the process is non-dumpable). start() reads the nonce, starts the
// solution's program (the command after "--", in the working folder; its stdin and stdout /dev/null,
// the request and answer pipes as descriptors 3 and 4, its stderr this process's) and sends the
// tests' own prints to /dev/null;
// a call of the solution's function is a request and an answer (judgebox_wire).
#[allow(dead_code)]
mod judgebox_tests {
    use std::io::Write;
    use std::os::unix::io::FromRawFd;
    use std::sync::Mutex;

    extern "C" {
        fn dup(fd: i32) -> i32;
        fn dup2(fd: i32, to: i32) -> i32;
        fn pipe2(fds: *mut i32, flags: i32) -> i32;
        fn close(fd: i32) -> i32;
        fn _exit(code: i32) -> !;
    }
    const O_CLOEXEC: i32 = 0o2000000;

    pub struct Channel {
        requests: std::fs::File,
        answers: std::fs::File,
    }
    pub static CHANNEL: Mutex<Option<Channel>> = Mutex::new(None);
    static MARKER: Mutex<Option<(std::fs::File, String)>> = Mutex::new(None);

    pub fn report(status: &str, code: i32) -> ! {
        let _ = std::io::stdout().flush();
        if let Ok(mut held) = MARKER.lock() {
            if let Some((out, nonce)) = held.as_mut() {
                let _ = write!(out, "\n{} {}\n", nonce, status);
                let _ = out.flush();
            }
        }
        unsafe { _exit(code) }
    }

    // no marker: the run is a runtime error
    pub fn lost(why: &str) -> ! {
        let _ = writeln!(std::io::stderr(), "judgebox: {}", why);
        unsafe { _exit(3) }
    }

    pub fn start() {
        let mut nonce = String::new();
        if std::io::stdin().read_line(&mut nonce).is_err() {
            lost("no nonce");
        }
        let args: Vec<String> = std::env::args().collect();
        let sep = match args.iter().position(|a| a == "--") {
            Some(s) if s + 1 < args.len() => s,
            _ => lost("no command of the solution's program after --"),
        };
        let here = std::env::current_dir().unwrap_or_else(|_| lost("no working folder"));
        let top = here.parent().unwrap_or(&here).to_path_buf();
        let program = if args[sep + 1].contains('/') { top.join(&args[sep + 1]) } else { args[sep + 1].clone().into() };
        let (mut req, mut ans) = ([0i32; 2], [0i32; 2]);
        if unsafe { pipe2(req.as_mut_ptr(), O_CLOEXEC) != 0 || pipe2(ans.as_mut_ptr(), O_CLOEXEC) != 0 } {
            lost("no pipe for the solution's process");
        }
        let (r, w) = (req[0], ans[1]);
        let mut command = std::process::Command::new(program);
        command.args(&args[sep + 2..]).current_dir(&top)
            .stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
        {
            use std::os::unix::process::CommandExt;
            // the request pipe as descriptor 3, the answer pipe as 4 (dup2 clears close-on-exec)
            unsafe {
                command.pre_exec(move || {
                    let (r2, w2) = (dup(r), dup(w));
                    if r2 < 0 || w2 < 0 || dup2(r2, 3) < 0 || dup2(w2, 4) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let _child = command.spawn().unwrap_or_else(|e| lost(&format!("cannot start the solution's program: {}", e)));
        unsafe {
            close(r);
            close(w);
        }
        let channel = unsafe { Channel { requests: std::fs::File::from_raw_fd(req[1]), answers: std::fs::File::from_raw_fd(ans[0]) } };
        *CHANNEL.lock().unwrap() = Some(channel);
        let _ = std::io::stdout().flush();
        let marker = unsafe { dup(1) };
        if marker < 0 {
            lost("no descriptor for the marker");
        }
        if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
            use std::os::unix::io::AsRawFd;
            unsafe { dup2(null.as_raw_fd(), 1); }
        }
        *MARKER.lock().unwrap() = Some((unsafe { std::fs::File::from_raw_fd(marker) }, nonce.trim().to_string()));
    }

    // one call: the arguments go out; the answer (the result, then every argument passed by &mut as the
    // function left it) comes back; the solution's panic is this process's panic, with its message
    pub fn call(request: Vec<u8>) -> Vec<u8> {
        let answer = {
            let mut held = CHANNEL.lock().unwrap_or_else(|e| e.into_inner());
            let channel = held.as_mut().unwrap_or_else(|| lost("no solution's process"));
            if !super::judgebox_wire::send(&mut channel.requests, &request) {
                lost("the solution's process ended before a call of its function");
            }
            super::judgebox_wire::receive(&mut channel.answers)
                .unwrap_or_else(|| lost("the solution's process ended during a call of its function"))
        };
        match answer.first() {
            Some(b'r') => answer[1..].to_vec(),
            Some(b'p') => {
                let message = String::from_utf8_lossy(&answer[1..]).into_owned();
                std::panic::panic_any(message)
            }
            _ => lost("the solution's process answered a call with no value"),
        }
    }

    pub fn value<T: super::judgebox_wire::Get>(i: &mut &[u8]) -> T {
        T::get(i).unwrap_or_else(|| lost("the solution's process answered a call with a malformed value"))
    }

    pub fn end(i: &[u8]) {
        if !i.is_empty() {
            lost("the solution's process answered a call with more than its values");
        }
    }
}

fn main() {
    judgebox_tests::start();
    if let Err(panic) = std::panic::catch_unwind(judgebox_tests_main) {
        let text = panic.downcast_ref::<String>().map(|s| s.as_str())
            .or_else(|| panic.downcast_ref::<&str>().copied()).unwrap_or("");
        if text.starts_with("assertion") {
            judgebox_tests::report("{\"status\": \"fail\"}", 101);
        }
        std::process::exit(101);
    }
    judgebox_tests::report("{\"status\": \"ok\"}", 0);
}
