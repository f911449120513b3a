//! `sojourn-offload`: runs a policy's described offloaded work
//! (`sojourn_policies::offload::run`, TetriSched's MILP solves) for the
//! ResourceManager, which keeps one of these as a child process so that a
//! solver's abort ends this process, not the RM. The request loop and its
//! line format are `sojourn_policies::isolation::serve`, shared with the
//! simulator's `sojourn offload-worker`.

fn main() {
    sojourn_policies::isolation::serve();
}
