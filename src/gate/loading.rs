//! Where inputs load: on the calling thread or on threads of their own.

use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::error::GateError;
use crate::inputs::Deferred;

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

    /// Loads an input when it was `given` (else it is `None` at once): as the plan says,
    /// on a new thread now, queued for [`Loading::start_small`], or here and now. The
    /// cell is set however loading ends (`None` on an error or a panic), so no reader
    /// waits forever.
    pub fn add<T: Send + Sync + 'static>(
        &mut self,
        name: &'static str,
        size: Size,
        given: bool,
        load: impl FnOnce() -> Result<Option<T>, GateError> + Send + 'static,
    ) -> Deferred<T> {
        struct SetOnExit<T>(Arc<OnceLock<Option<T>>>);
        impl<T> Drop for SetOnExit<T> {
            fn drop(&mut self) {
                let _ = self.0.set(None);
            }
        }
        if !given {
            return Deferred::ready(None);
        }
        let cell = Arc::new(OnceLock::new());
        let guard = SetOnExit(Arc::clone(&cell));
        let verbose = self.verbose;
        let task: LoadTask = Box::new(move || {
            let started = Instant::now();
            let loaded = load()?;
            if verbose {
                eprintln!(
                    "input: {name} {:.1} ms",
                    started.elapsed().as_secs_f64() * 1000.0
                );
            }
            let _ = guard.0.set(loaded);
            Ok(())
        });
        match (self.plan, size) {
            (Plan::Inline, _) => self.loaders.push(Loader::Done(task())),
            (_, Size::Large) => self
                .loaders
                .push(Loader::Thread(crate::threads::spawn(task))),
            (_, Size::Small) => self.small.push(task),
        }
        Deferred::of_cell(cell)
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
