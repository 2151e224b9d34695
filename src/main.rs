fn main() -> std::process::ExitCode {
    tune_allocator();
    freezegate::commands::main()
}

/// Loader threads page in tens of megabytes while scripts allocate, and glibc grew each
/// thread's heap a few pages at a time (`mprotect`, `brk`): every such call takes the
/// memory-map lock the loaders' page faults wait on (2,000 context switches in a large
/// run, 40 with this). Grow in large steps and keep what was freed.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; no other thread exists yet.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}
