//! The allocator the `sojourn` binary and the simulator benchmark run on,
//! mimalloc, and the one setting they change.
//!
//! A long run's memory follows its backlog: on the 500,000-job Google-like
//! workload the resident set climbs to several hundred MB while jobs queue,
//! then falls, over and over. By default mimalloc (v3) hands pages that stay
//! free for a second back to the OS, and the kernel zeroes each one again
//! when the backlog next grows: about 7 % of a 100,000-job pigeon run's CPU
//! time (`clear_page_erms` and page faults in a profile). Kept,
//! the pages are reused as they are; the peak resident set is about the
//! same (a few % higher), and it is freed when the process exits.

pub use mimalloc::MiMalloc;
use std::os::raw::{c_int, c_long};

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (v2 and v3 alike;
/// the test below checks it against the option's default in v3).
const MI_OPTION_PURGE_DELAY: c_int = 15;

extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
}

/// Never returns freed pages to the OS (purge delay -1) unless the user set
/// `MIMALLOC_PURGE_DELAY` themselves. Call it first thing in `main`.
pub fn keep_freed_pages() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets an integer option of the linked mimalloc; it takes no
        // pointers and is called before any other thread exists.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option index names the purge delay: its default in mimalloc v3
    /// is 1000 ms, and the next option is use_numa_nodes (default 0). A
    /// mimalloc upgrade that renumbers the options fails here, not silently.
    #[test]
    fn the_option_index_is_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return; // the user's setting is the default then; nothing to read
        }
        // SAFETY: reads an integer option; no pointers.
        let (before, neighbour) =
            unsafe { (mi_option_get(MI_OPTION_PURGE_DELAY), mi_option_get(MI_OPTION_PURGE_DELAY + 1)) };
        assert_eq!(before, 1000, "mimalloc's option {MI_OPTION_PURGE_DELAY} is not the purge delay");
        assert_eq!(neighbour, 0, "option {} should be use_numa_nodes (default 0)", MI_OPTION_PURGE_DELAY + 1);
        keep_freed_pages();
        // SAFETY: as above.
        assert_eq!(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }, -1);
    }
}
