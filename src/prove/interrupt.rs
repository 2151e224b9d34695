//! A proof stopped by a signal (a CI job's timeout sends SIGTERM, a terminal's Ctrl-C
//! SIGINT, a closed session SIGHUP) stops the Python processes it started and removes
//! its scratch copy before it exits, as a finished proof does: a killed `prove` left
//! its fork servers' pytest runs going and a copy of the repository in the temporary
//! directory.
//!
//! The handler only writes the signal's number to a pipe (what a handler may do); a
//! thread waiting on the pipe does the rest: SIGTERM to each process prove started (a
//! fork server stops the run it forked, `driver.py`'s `_stop`), SIGKILL to any still
//! there a moment later, the scratch directories removed, exit 128 + the signal.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static DIRECTORIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Whether a signal's stop is under way: nothing new is started, copied or written.
pub fn stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}

/// Stops what prove started when a signal ends it (once per process; later calls do
/// nothing). Without a pipe the signals keep their default action.
pub fn install() {
    #[cfg(unix)]
    unix::install();
}

/// Called as a command returns: while a signal's stop is under way, what the command
/// made of its children's ends (a fork server gone: exit 2) is not the outcome; the
/// stopping thread ends the process.
pub fn wait_if_stopping() {
    while stopping() {
        std::thread::park();
    }
}

/// A process prove started, stopped with prove: registered while it may run. One
/// started while a stop is under way is stopped at once.
pub struct Watched(u32);

impl Watched {
    pub fn child(child: &std::process::Child) -> Watched {
        if let Ok(mut children) = CHILDREN.lock() {
            children.push(child.id());
        }
        #[cfg(unix)]
        if stopping() {
            unix::kill(child.id(), unix::KILL);
        }
        Watched(child.id())
    }
}

impl Drop for Watched {
    /// Dropped by its owner right after it reaps the process.
    fn drop(&mut self) {
        if let Ok(mut children) = CHILDREN.lock() {
            children.retain(|&pid| pid != self.0);
        }
    }
}

/// A directory removed when a signal stops prove (the scratch copy, which removes
/// itself when dropped otherwise).
pub struct WatchedDir(PathBuf);

impl WatchedDir {
    pub fn new(dir: &Path) -> WatchedDir {
        if let Ok(mut directories) = DIRECTORIES.lock() {
            directories.push(dir.to_path_buf());
        }
        WatchedDir(dir.to_path_buf())
    }
}

impl Drop for WatchedDir {
    fn drop(&mut self) {
        if let Ok(mut directories) = DIRECTORIES.lock() {
            directories.retain(|d| d != &self.0);
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Once;
    use std::time::Duration;

    use super::{CHILDREN, DIRECTORIES, STOPPING};

    static WAKE: AtomicI32 = AtomicI32::new(-1);
    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    pub const KILL: libc::c_int = libc::SIGKILL;

    pub fn install() {
        static INSTALLED: Once = Once::new();
        INSTALLED.call_once(|| {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: pipe(2) writes two descriptors into the array it is given.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return;
            }
            let [read, write] = fds;
            for fd in fds {
                // SAFETY: fcntl on a descriptor this function owns: children do not
                // inherit it.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
            WAKE.store(write, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut signal = [0u8; 1];
                // SAFETY: reads one byte into a one-byte buffer from the pipe's read end.
                while unsafe { libc::read(read, signal.as_mut_ptr().cast(), 1) } != 1 {}
                stop(libc::c_int::from(signal[0]));
            });
            for signal in SIGNALS {
                // SAFETY: installs a handler that only calls write(2), which is
                // async-signal-safe; the struct is zeroed then filled as sigaction(2)
                // wants.
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                    libc::sigemptyset(&mut action.sa_mask);
                    action.sa_flags = libc::SA_RESTART;
                    libc::sigaction(signal, &action, std::ptr::null_mut());
                }
            }
        });
    }

    extern "C" fn on_signal(signal: libc::c_int) {
        let byte = signal as u8;
        let fd = WAKE.load(Ordering::SeqCst);
        // SAFETY: write(2) of one byte from a live stack variable is async-signal-safe.
        unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    }

    pub fn kill(pid: u32, signal: libc::c_int) {
        // SAFETY: kill(2) of a process prove started and has not reaped (a reaped one
        // is unregistered right after its `wait`).
        unsafe { libc::kill(pid as libc::pid_t, signal) };
    }

    /// Sends `signal` to every process registered now (the list is read each time: one
    /// reaped since is gone from it, one started since is in it).
    fn send(signal: libc::c_int) {
        if let Ok(children) = CHILDREN.lock() {
            for &pid in children.iter() {
                kill(pid, signal);
            }
        }
    }

    fn stop(signal: libc::c_int) -> ! {
        // Whatever happens here (a closed terminal makes stderr fail), the process ends.
        struct Exit(libc::c_int);
        impl Drop for Exit {
            fn drop(&mut self) {
                std::process::exit(128 + self.0);
            }
        }
        let _exit = Exit(signal);
        STOPPING.store(true, Ordering::SeqCst);
        send(libc::SIGTERM);
        std::thread::sleep(Duration::from_millis(500));
        send(libc::SIGKILL);
        let directories: Vec<_> = DIRECTORIES.lock().map(|d| d.clone()).unwrap_or_default();
        for dir in directories {
            // A run stopped a moment ago may still be closing a file in it: once more.
            if std::fs::remove_dir_all(&dir).is_err() {
                std::thread::sleep(Duration::from_millis(200));
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "freezegate: stopped by signal {signal}; the pytest runs it started are stopped and its scratch copy removed"
        );
        std::process::exit(128 + signal);
    }
}
