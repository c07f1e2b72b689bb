//! Optimisation passes, one per file. Each is `run(&mut Shader) -> bool` (whether it changed
//! anything) and keeps the IR valid; [`crate::ir::verify::verify_after`] checks that in tests
//! and debug builds. [`optimize`] is the pipeline.

pub mod const_fold;
pub mod copy_prop;
pub mod cse;
pub mod dce;
pub mod fma;
pub mod merge_blocks;
pub mod mod_fold;
pub mod simplify;
pub mod unreachable;

use crate::ir::Shader;
use crate::ir::verify::verify_after;

/// Optimisation options.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Contract a multiply feeding an add into one FMA (changes rounding; off for `_PRECISE`).
    pub contract: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { contract: true }
    }
}

/// A pass: rewrites the shader in place and says whether it changed anything.
type Pass = fn(&mut Shader) -> bool;

/// Runs the passes to a fixed point (bounded: each round is linear, and rounds stop as soon as
/// nothing changes; a handful suffice). A pass that found nothing to do is not run again until
/// another pass changes the IR: it would find nothing again.
pub fn optimize(shader: &mut Shader, options: &Options) {
    let mut passes: Vec<(&str, Pass)> = vec![
        ("merge_blocks", merge_blocks::run),
        ("copy_prop", copy_prop::run),
        ("const_fold", const_fold::run),
        ("simplify", simplify::run),
        ("mod_fold", mod_fold::run),
    ];
    if options.contract {
        passes.push(("fma", fma::run));
    }
    passes.extend([("cse", cse::run as Pass), ("dce", dce::run)]);
    let mut clean = vec![false; passes.len()];
    for _ in 0..8 {
        let mut changed = false;
        for (k, &(name, pass)) in passes.iter().enumerate() {
            if clean[k] {
                continue;
            }
            if step(shader, name, pass) {
                changed = true;
                clean.fill(false);
            } else {
                clean[k] = true;
            }
        }
        if !changed {
            break;
        }
    }
}

fn step(shader: &mut Shader, name: &str, pass: fn(&mut Shader) -> bool) -> bool {
    let changed = pass(shader);
    if changed {
        verify_after(shader, name);
    }
    changed
}
