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

/// The pipeline, in order: each pass with the passes its changes can give new work to.
///
/// A pass that found nothing is not run again until one of the passes listed as enabling it
/// changes the IR; a pass that changed the IR is run again later unless it is listed as
/// idempotent (a second run right after it would find nothing). The relations below are the
/// reasons a pass's opportunities can appear; debug builds check every skip (see [`optimize`]).
///
/// * `merge_blocks` changes the CFG, turns φs into copies and moves instructions: it enables
///   everything. It is the only pass that touches the CFG, so only it enables itself.
/// * `copy_prop` renames uses and puts constants into sources (new constant operands, identical
///   instructions, `FADD x, −0` patterns, dead definitions): everything but `merge_blocks`.
/// * `const_fold` turns instructions into `copy #k` (propagated by `copy_prop`, merged by `cse`,
///   dead inputs for `dce`), and folds chains in layout order (itself, when a use precedes its
///   definition in the layout). It only removes uses of values defined by copies, which are
///   never the single-use producers `mod_fold` and `fma` look for.
/// * `simplify`, `mod_fold` and `fma` rewrite sources and opcodes: everything but
///   `merge_blocks`, themselves included.
/// * `cse` renames uses of a value to an equal dominating one (φ arguments can become equal, a
///   producer can lose all but one reader, a constant copy can become visible earlier in the
///   layout) and kills definitions: `copy_prop`, `const_fold`, `mod_fold`, `fma`, `dce`. It does
///   not create constant operands (`simplify`), and its one walk collapses every chain
///   (idempotent: the walk after it visits the same expressions and finds no new match).
/// * `dce` only removes unused instructions: single-use producers appear (`mod_fold`, `fma`);
///   its mark-and-sweep leaves nothing unmarked behind (idempotent).
struct Step {
    name: &'static str,
    pass: Pass,
    enables: &'static [&'static str],
    idempotent: bool,
}

const ALL_BUT_MERGE: &[&str] = &["copy_prop", "const_fold", "simplify", "mod_fold", "fma", "cse", "dce"];

const PIPELINE: [Step; 8] = [
    Step {
        name: "merge_blocks",
        pass: merge_blocks::run,
        enables: &["merge_blocks", "copy_prop", "const_fold", "simplify", "mod_fold", "fma", "cse", "dce"],
        idempotent: false,
    },
    Step { name: "copy_prop", pass: copy_prop::run, enables: ALL_BUT_MERGE, idempotent: false },
    Step {
        name: "const_fold",
        pass: const_fold::run,
        enables: &["copy_prop", "const_fold", "cse", "dce"],
        idempotent: false,
    },
    Step { name: "simplify", pass: simplify::run, enables: ALL_BUT_MERGE, idempotent: false },
    Step { name: "mod_fold", pass: mod_fold::run, enables: ALL_BUT_MERGE, idempotent: false },
    Step { name: "fma", pass: fma::run, enables: ALL_BUT_MERGE, idempotent: false },
    Step {
        name: "cse",
        pass: cse::run,
        enables: &["copy_prop", "const_fold", "mod_fold", "fma", "dce"],
        idempotent: true,
    },
    Step { name: "dce", pass: dce::run, enables: &["mod_fold", "fma"], idempotent: true },
];

/// Runs the passes to a fixed point (bounded: each round is linear, and rounds stop as soon as
/// nothing changes; a handful suffice). A pass runs only when it may have new work: after it
/// changed the IR itself (unless idempotent), or after a pass that can enable it changed the IR
/// (see [`Step`]); skipping the others gives the same result as running them, since they would
/// change nothing. Debug builds run every skipped pass on a copy and check exactly that.
pub fn optimize(shader: &mut Shader, options: &Options) {
    let steps: Vec<&Step> = PIPELINE.iter().filter(|s| options.contract || s.name != "fma").collect();
    // `enables[k]`: bit j set when step k's changes can give step j new work.
    let enables: Vec<u16> = steps
        .iter()
        .map(|s| {
            let bits = steps.iter().enumerate().filter(|(_, t)| s.enables.contains(&t.name));
            bits.fold(0, |acc, (j, _)| acc | 1 << j)
        })
        .collect();
    let mut dirty: u16 = (1 << steps.len()) - 1;
    // What the plain fixed point would run: every pass after any change (debug check only).
    let mut plain_dirty = dirty;
    for _ in 0..8 {
        let mut changed = false;
        for (k, step) in steps.iter().enumerate() {
            if dirty & 1 << k == 0 {
                if cfg!(debug_assertions) && plain_dirty & 1 << k != 0 {
                    let mut copy = shader.clone();
                    assert!(!(step.pass)(&mut copy), "the skipped pass `{}` had work to do", step.name);
                    plain_dirty &= !(1 << k);
                }
                continue;
            }
            if step_changed(shader, step.name, step.pass) {
                changed = true;
                dirty |= enables[k];
                if step.idempotent {
                    dirty &= !(1 << k);
                } else {
                    dirty |= 1 << k;
                }
                plain_dirty = (1 << steps.len()) - 1;
            } else {
                dirty &= !(1 << k);
                plain_dirty &= !(1 << k);
            }
        }
        if !changed {
            break;
        }
    }
}

fn step_changed(shader: &mut Shader, name: &str, pass: Pass) -> bool {
    let changed = pass(shader);
    if changed {
        verify_after(shader, name);
    }
    changed
}
