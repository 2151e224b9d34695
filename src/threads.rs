//! Threads that start on another core at once.
//!
//! Linux queues a new thread on its parent's core and moves it to an idle one only at the
//! next load-balancing tick, milliseconds later: as long as a whole small run. Until then
//! the new thread waits for its parent to block, so an input "loading beside" the pack's
//! compilation loaded after it. Each thread started here moves itself off its parent's
//! core as its first act (the parent yields once so that it can), then may run anywhere.

use std::thread::{JoinHandle, Scope, ScopedJoinHandle};

/// Like [`std::thread::spawn`], with the new thread on another core from the start.
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let handle = std::thread::spawn(off_this_core(f));
    std::thread::yield_now();
    handle
}

/// Like [`Scope::spawn`], with the new thread on another core from the start.
pub fn spawn_scoped<'scope, F, T>(
    scope: &'scope Scope<'scope, '_>,
    f: F,
) -> ScopedJoinHandle<'scope, T>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    let handle = scope.spawn(off_this_core(f));
    std::thread::yield_now();
    handle
}

/// `f`, run by a new thread after it has left the core of the thread calling this.
fn off_this_core<T>(f: impl FnOnce() -> T + Send) -> impl FnOnce() -> T + Send {
    let parent = current_cpu();
    move || {
        leave(parent);
        f()
    }
}

#[cfg(target_os = "linux")]
fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    usize::try_from(unsafe { libc::sched_getcpu() }).ok()
}

#[cfg(not(target_os = "linux"))]
fn current_cpu() -> Option<usize> {
    None
}

/// Moves the calling thread off `cpu` if it is there and another core is allowed, then
/// allows it every core it had. Failures leave it where it is: only the speed differs.
#[cfg(target_os = "linux")]
fn leave(cpu: Option<usize>) {
    let Some(cpu) = cpu.filter(|&cpu| cpu < libc::CPU_SETSIZE as usize) else {
        return;
    };
    if current_cpu() != Some(cpu) {
        return;
    }
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: the cpu_set_t values are plain bit sets, zeroed then filled by the kernel;
    // `cpu` is below CPU_SETSIZE; the calls affect only the calling thread (pid 0).
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut allowed) != 0 {
            return;
        }
        let mut elsewhere = allowed;
        libc::CPU_CLR(cpu, &mut elsewhere);
        if libc::CPU_COUNT(&elsewhere) == 0 {
            return;
        }
        if libc::sched_setaffinity(0, size, &elsewhere) == 0 {
            libc::sched_setaffinity(0, size, &allowed);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn leave(_cpu: Option<usize>) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The cores the calling thread may run on.
    fn allowed() -> Vec<usize> {
        // SAFETY: a zeroed cpu_set_t is an empty set, filled by the kernel, then read.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
                .collect()
        }
    }

    #[test]
    fn a_thread_leaves_the_core_it_is_on_and_keeps_every_core_it_had() {
        let (before, after, from, to) = std::thread::spawn(|| {
            let before = allowed();
            let from = current_cpu();
            leave(from);
            (before, allowed(), from, current_cpu())
        })
        .join()
        .unwrap();
        assert_eq!(before, after, "the thread is pinned after leaving");
        if before.len() > 1 {
            assert_ne!(from, to, "cores {before:?} allowed, still on core {from:?}");
        } else {
            assert_eq!(from, to, "one core allowed, yet the thread moved");
        }
    }

    #[test]
    fn spawned_threads_run_and_return() {
        let value = spawn(|| 6 * 7).join().unwrap();
        let scoped = std::thread::scope(|scope| spawn_scoped(scope, || value + 1).join().unwrap());
        assert_eq!((value, scoped), (42, 43));
    }
}
