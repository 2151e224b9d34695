//! The pipe itself: pytest inherits its write end (and nothing else does: the plugin
//! marks it close-on-exec at once), this process reads it on a thread while it waits
//! for pytest.

use std::io::BufRead;
use std::process::{Command, ExitStatus};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use super::protocol::Received;
use super::FD_VARIABLE;
use crate::error::GateError;

/// How long the record may take to arrive once pytest has exited (a process a test
/// started may still hold the pipe open; the record came before pytest's exit or not
/// at all).
const AFTER_EXIT: Duration = Duration::from_secs(5);

#[cfg(unix)]
pub fn supervise(
    mut command: Command,
    program: &str,
    token: &str,
) -> Result<(ExitStatus, Received), GateError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;

    let (reader, writer) =
        std::io::pipe().map_err(|e| GateError::usage(format!("cannot make a pipe: {e}")))?;
    let fd = writer.as_raw_fd();
    command.env(FD_VARIABLE, fd.to_string());
    // SAFETY: between fork and exec only fcntl(2), which is async-signal-safe, runs:
    // the write end loses close-on-exec in the child alone.
    unsafe {
        command.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| {
        GateError::usage(format!("freezegate run: cannot start `{program}`: {e}")).with_help(
            "give the test command after `--`, e.g. `freezegate run -- python -m pytest`",
        )
    })?;
    // Only pytest (and what it lets inherit) holds the write end now: the pipe closes
    // when pytest is done with it.
    drop(writer);
    let received = Arc::new(Mutex::new(Received::default()));
    let (done, finished) = mpsc::channel::<()>();
    let (shared, token) = (Arc::clone(&received), token.to_string());
    crate::threads::spawn(move || {
        let mut reader = std::io::BufReader::with_capacity(1 << 16, reader);
        let mut line = String::new();
        loop {
            line.clear();
            let read = reader.read_line(&mut line);
            let mut received = shared.lock().unwrap_or_else(|e| e.into_inner());
            match read {
                Ok(0) => break,
                Ok(_) => {
                    received.take(line.trim_end_matches('\n'), &token);
                    if received.is_over() {
                        break;
                    }
                }
                Err(e) => {
                    received
                        .broken
                        .get_or_insert(format!("the pipe could not be read: {e}"));
                    break;
                }
            }
        }
        let _ = done.send(());
    });
    let status = child
        .wait()
        .map_err(|e| GateError::usage(format!("freezegate run: waiting for `{program}`: {e}")))?;
    let timed_out = finished.recv_timeout(AFTER_EXIT).is_err();
    let mut received = std::mem::take(&mut *received.lock().unwrap_or_else(|e| e.into_inner()));
    if timed_out && !received.is_over() {
        received.broken.get_or_insert(format!(
            "the pipe stayed open {} s after pytest exited (a process the tests started holds it) and no record came",
            AFTER_EXIT.as_secs()
        ));
    }
    Ok((status, received))
}

#[cfg(not(unix))]
pub fn supervise(
    _command: Command,
    _program: &str,
    _token: &str,
) -> Result<(ExitStatus, Received), GateError> {
    Err(GateError::usage(
        "freezegate run supervises pytest through an inherited pipe, which this platform does not have yet",
    )
    .with_help("run `pytest --freezegate`, then `freezegate check --run gate/run.json`"))
}
