//! Where inputs load: on the calling thread or on threads of their own.

use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::Instant;

use crate::error::GateError;
use crate::inputs::Deferred;

/// How one input loads, as its loader in [`super::load`] describes it: what it reads
/// (which decides the [`Plan`]), and the work.
pub struct Load<T> {
    pub reads: Reads,
    work: Box<dyn FnOnce() -> Result<Option<T>, GateError> + Send>,
}

/// What a loader reads.
#[derive(Debug)]
pub enum Reads {
    /// These files (or directories).
    Files(Vec<PathBuf>),
    /// What a tool prints (pytest, git): worth a thread whatever its size.
    Tool,
    /// Another input, which it waits for.
    Input,
}

impl<T> Load<T> {
    pub fn new(
        reads: Reads,
        work: impl FnOnce() -> Result<Option<T>, GateError> + Send + 'static,
    ) -> Load<T> {
        Load {
            reads,
            work: Box::new(work),
        }
    }
}

/// From this size on (all inputs together, or the small ones together), inputs are
/// worth a thread: below, starting one costs more than it saves.
pub const PARALLEL_FROM_BYTES: u64 = 256 << 10;

/// The loaders of one [`crate::inputs::Facts`], as a [`Plan`] lays them out.
pub struct Loading {
    plan: Plan,
    /// Every loader in the order it started: on a thread, or already done.
    loaders: Vec<Loader>,
    small: Vec<LoadTask>,
    /// Print how long each input took (`--verbose`).
    verbose: bool,
}

/// Where inputs load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Everything on the calling thread, in order: for a few small files, starting
    /// threads costs more than it saves.
    Inline,
    /// Each large input on a thread of its own; the small ones on the calling thread,
    /// when [`Loading::start_small`] is called (a few kilobytes load in less time than a
    /// thread takes to start, and a thread of theirs would share a core with a large
    /// input's).
    LargeOnThreads,
    /// Each large input on a thread of its own, and the small ones one after another on
    /// one more (when they are large enough together, or come from a tool such as git).
    AllOnThreads,
}

enum Loader {
    Thread(JoinHandle<Result<(), GateError>>),
    Done(Result<(), GateError>),
}

type LoadTask = Box<dyn FnOnce() -> Result<(), GateError> + Send>;

/// How big an input may get: whether it deserves a thread of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    Large,
    Small,
}

impl std::fmt::Debug for Loading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Loading({:?}, {} started, {} queued)",
            self.plan,
            self.loaders.len(),
            self.small.len()
        )
    }
}

impl Plan {
    /// Where the inputs `loads` describe load: on threads with `--jobs` above 1, when a
    /// tool runs (pytest, git) or a directory is read, or when the files come to
    /// [`PARALLEL_FROM_BYTES`]; the small inputs get a thread of their own only when
    /// they are that large themselves or come from a tool.
    pub fn of(jobs: Option<u16>, loads: &[Option<(Size, &Reads)>]) -> Plan {
        // The bytes of each size's files; `None` once one is a directory or a tool.
        let bytes = |size: Size| -> Option<u64> {
            let mut bytes = 0;
            for (_, reads) in loads.iter().flatten().filter(|(s, _)| *s == size) {
                match reads {
                    Reads::Tool => return None,
                    Reads::Input => {}
                    Reads::Files(paths) => {
                        for path in paths {
                            match std::fs::metadata(path) {
                                Ok(meta) if meta.is_dir() => return None,
                                Ok(meta) => bytes += meta.len(),
                                Err(_) => {} // the loader names the missing file
                            }
                        }
                    }
                }
            }
            Some(bytes)
        };
        let (large, small) = (bytes(Size::Large), bytes(Size::Small));
        let small_needs_thread = small.is_none_or(|bytes| bytes >= PARALLEL_FROM_BYTES);
        let threaded = match jobs {
            Some(jobs) => jobs > 1,
            None => {
                small_needs_thread
                    || large.is_none_or(|large| large + small.unwrap_or(0) >= PARALLEL_FROM_BYTES)
            }
        };
        match (threaded, small_needs_thread) {
            (false, _) => Plan::Inline,
            (true, false) => Plan::LargeOnThreads,
            (true, true) => Plan::AllOnThreads,
        }
    }
}

impl Loading {
    pub fn new(plan: Plan, verbose: bool) -> Loading {
        Loading {
            plan,
            loaders: Vec::new(),
            small: Vec::new(),
            verbose,
        }
    }

    pub fn is_threaded(&self) -> bool {
        self.plan != Plan::Inline
    }

    /// Starts loading `into` as the plan says: on a new thread now, queued for
    /// [`Loading::start_small`], or here and now. `into` is set however loading ends
    /// (`None` on an error or a panic), so no reader waits forever.
    pub fn add<T: Send + Sync + 'static>(
        &mut self,
        name: &'static str,
        size: Size,
        into: &Deferred<T>,
        load: Load<T>,
    ) {
        struct SetOnExit<T>(Deferred<T>);
        impl<T> Drop for SetOnExit<T> {
            fn drop(&mut self) {
                self.0.set(None);
            }
        }
        let guard = SetOnExit(into.clone());
        let verbose = self.verbose;
        let task: LoadTask = Box::new(move || {
            let started = Instant::now();
            let loaded = (load.work)()?;
            if verbose {
                eprintln!(
                    "input: {name} {:.1} ms",
                    started.elapsed().as_secs_f64() * 1000.0
                );
            }
            guard.0.set(loaded);
            Ok(())
        });
        match (self.plan, size) {
            (Plan::Inline, _) => self.loaders.push(Loader::Done(task())),
            (_, Size::Large) => self
                .loaders
                .push(Loader::Thread(crate::threads::spawn(task))),
            (_, Size::Small) => self.small.push(task),
        }
    }

    /// Loads the queued small inputs, one after another: here, or on a thread of theirs.
    pub fn start_small(&mut self) {
        let tasks = std::mem::take(&mut self.small);
        if tasks.is_empty() {
            return;
        }
        if self.plan == Plan::AllOnThreads {
            self.loaders
                .push(Loader::Thread(crate::threads::spawn(move || {
                    first_error(tasks.into_iter().map(|task| task()))
                })));
        } else {
            self.loaders
                .extend(tasks.into_iter().map(|task| Loader::Done(task())));
        }
    }

    /// Waits for every loader; the first input error (in the order they were started)
    /// wins over anything the rules concluded meanwhile. A loader's panic is re-raised.
    pub fn finish(mut self) -> Result<(), GateError> {
        self.start_small();
        first_error(self.loaders.into_iter().map(|loader| {
            match loader {
                Loader::Thread(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Loader::Done(result) => result,
            }
        }))
    }
}

/// The first error among `results`, all of which are taken (each load runs to its end).
fn first_error(results: impl Iterator<Item = Result<(), GateError>>) -> Result<(), GateError> {
    let mut first = Ok(());
    for result in results {
        if first.is_ok() {
            first = result;
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_of(dir: &tempfile::TempDir, name: &str, bytes: usize) -> Reads {
        let path = dir.path().join(name);
        std::fs::write(&path, vec![b'x'; bytes]).unwrap();
        Reads::Files(vec![path])
    }

    #[test]
    fn a_few_small_files_load_inline_and_large_ones_get_threads() {
        let dir = tempfile::tempdir().unwrap();
        let (small, large) = (file_of(&dir, "s", 1_000), file_of(&dir, "l", 300 << 10));
        let tool = Reads::Tool;
        assert_eq!(
            Plan::of(
                None,
                &[
                    Some((Size::Large, &small)),
                    None,
                    Some((Size::Small, &small))
                ]
            ),
            Plan::Inline
        );
        assert_eq!(
            Plan::of(
                None,
                &[Some((Size::Large, &large)), Some((Size::Small, &small))]
            ),
            Plan::LargeOnThreads
        );
        // A tool among the small inputs (git for --base) gives them a thread of their own.
        assert_eq!(
            Plan::of(
                None,
                &[Some((Size::Small, &tool)), Some((Size::Small, &small))]
            ),
            Plan::AllOnThreads
        );
        // pytest for --collect is a large input's tool: the small ones stay here.
        assert_eq!(
            Plan::of(
                None,
                &[Some((Size::Large, &tool)), Some((Size::Small, &small))]
            ),
            Plan::LargeOnThreads
        );
        // A directory (of observability files) is read on a thread however small.
        let observed = Reads::Files(vec![dir.path().to_path_buf()]);
        assert_eq!(
            Plan::of(None, &[Some((Size::Small, &observed))]),
            Plan::AllOnThreads
        );
        // An input waiting for another reads nothing itself.
        assert_eq!(
            Plan::of(None, &[Some((Size::Small, &Reads::Input))]),
            Plan::Inline
        );
        // --jobs decides.
        assert_eq!(
            Plan::of(
                Some(1),
                &[Some((Size::Large, &large)), Some((Size::Small, &tool))]
            ),
            Plan::Inline
        );
        assert_eq!(
            Plan::of(Some(2), &[Some((Size::Small, &small))]),
            Plan::LargeOnThreads
        );
    }

    #[test]
    fn an_input_is_set_however_its_loader_ends() {
        for plan in [Plan::Inline, Plan::LargeOnThreads, Plan::AllOnThreads] {
            let mut loading = Loading::new(plan, false);
            let (fine, failing) = (Deferred::<u32>::pending(), Deferred::<u32>::pending());
            loading.add(
                "fine",
                Size::Large,
                &fine,
                Load::new(Reads::Input, || Ok(Some(7))),
            );
            loading.add(
                "failing",
                Size::Small,
                &failing,
                Load::new(Reads::Input, || Err(GateError::usage("bad input"))),
            );
            let error = loading.finish().expect_err("the failing loader's error");
            assert!(error.to_string().contains("bad input"), "{plan:?}: {error}");
            assert_eq!(fine.get(), Some(&7), "{plan:?}");
            assert_eq!(failing.get(), None, "{plan:?}");
            assert!(fine.is_ready() && failing.is_ready(), "{plan:?}");
        }
    }
}
