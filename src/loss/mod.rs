//! Loss forensics of one direction (DOMAIN.md sections 4-7): the tracker (`tracker`), the
//! sender states and their transitions (`states`), and the record tables (`records`).

pub mod records;
pub mod states;
pub mod tracker;
