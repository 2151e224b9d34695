fn main() -> std::process::ExitCode {
    tune_allocator();
    quiet_on_closed_pipe();
    freezegate::commands::main()
}

/// `freezegate rules | head -1` ends like any Unix tool when the reader goes: killed by
/// SIGPIPE, not a panic in `println!` (Rust ignores SIGPIPE by default).
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default disposition of one signal; no other thread exists yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Loader threads page in tens of megabytes while scripts allocate, and glibc grows a
/// heap a few pages at a time (`brk`, `mprotect`): every such call takes the memory-map
/// lock that the loaders' page faults wait on (250 to 450 context switches in a large
/// run, 30 to 55 with this). Growing by 16 MiB at a time costs about 1.5 MiB of peak
/// memory; 64 MiB cost 4.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; no other thread exists yet.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
    }
}
