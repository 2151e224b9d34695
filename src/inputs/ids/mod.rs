//! Sets of pytest node ids and repository paths, and the text formats they arrive in.

mod formats;
mod index;
mod node_id;
mod set;

pub use formats::{parse_changed, parse_collected, parse_id_list};
pub use node_id::*;
pub use set::*;
