//! Optimisation passes, one per file. Each is `run(&mut Shader) -> bool` (whether it changed
//! anything) and keeps the IR valid; [`crate::ir::verify::verify_after`] checks that in tests
//! and debug builds. [`optimize`] is the pipeline; [`cse`] is not in it but runs once per
//! variant after legalisation (`compile.rs`), nor is [`sink`], which runs once right after
//! [`optimize`].

pub mod const_fold;
pub mod copy_prop;
pub mod cse;
pub mod dce;
pub mod dead_cf;
mod facts;
pub mod fma;
pub mod merge_blocks;
pub mod mod_fold;
pub mod select;
pub mod simplify;
pub mod sink;
pub mod unreachable;

use crate::ir::dom::DomTree;
use crate::ir::verify::verify_after;
use crate::ir::{Block, InstKind, Shader, Terminator, Value};

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

/// What a pass run did, as far as the scheduler in [`optimize`] cares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The run changed the IR.
    pub changed: bool,
    /// `mod_fold`: a φ became trivial (work for `copy_prop`).
    pub phi_made_trivial: bool,
    /// `fma`: a fused instruction reads only constants and constant copies (work for
    /// `const_fold` if the product it absorbed could not be folded, e.g. for its flow bits).
    pub constant_fused: bool,
    /// `mod_fold`: a source now reads a constant (`#k`, or a value defined by `copy #k`) it did
    /// not read before (work for `const_fold` and `simplify`; FAU words are constants to
    /// neither).
    pub constant_moved: bool,
    /// `simplify`: an instruction became a copy (work for `copy_prop` and `const_fold`).
    pub copies_made: bool,
    /// `simplify`: an instruction now reads past a value it read (which may be dead: work for
    /// `dce`).
    pub reads_dropped: bool,
    /// `mod_fold`, `simplify`: a run right after this one would find nothing (they are not
    /// idempotent in general).
    pub settled: bool,
    /// `mod_fold`, `fma`: a candidate was held back only because its producer has other
    /// readers (removing readers can enable it).
    pub held_by_uses: bool,
}

impl Outcome {
    fn of(changed: bool) -> Outcome {
        Outcome { changed, ..Outcome::default() }
    }
}

/// Analyses kept between passes while what they are computed from is unchanged.
#[derive(Default)]
pub struct Analyses {
    /// The dominator tree of the current CFG; dropped by [`Analyses::cfg_changed`].
    dom: Option<DomTree>,
    /// Set by [`optimize`] when it reached its fixed point: no pass has work left.
    converged: bool,
    /// Side tables lent to the pass runs.
    scratch: Scratch,
}

/// Side tables the passes lend each other: a pass takes the buffers it needs (sizing and
/// filling them itself) and puts them back, so the twenty-odd pass runs of a compile allocate
/// each buffer once instead of once per run (for small shaders, allocating cost more than
/// filling). Contents never carry over from one run to the next.
#[derive(Default)]
pub struct Scratch {
    /// A value per value: replacements (`copy_prop`, `mod_fold`, and `cse` after legalisation).
    values: Vec<Option<Value>>,
    /// A flag per value or instruction (`dce`, `mod_fold`).
    flags: Vec<bool>,
    /// Whether each value is read (`dce`).
    reads: Vec<bool>,
    /// A count per value or bucket (use counts, `cse`'s bucket heads).
    counts: Vec<u32>,
    /// A constant word per value (`const_fold`).
    words: Vec<Option<u32>>,
    /// An FAU or constant operand per value (`copy_prop`).
    operands: Vec<Option<crate::ir::Operand>>,
    /// Instructions (`copy_prop`'s φs, `dce`'s worklist).
    insts: Vec<crate::ir::InstId>,
    /// `cse`'s available expressions.
    available: Vec<cse::Available>,
}

/// `buf` emptied, then filled with `n` copies of `fill` (reusing its capacity).
fn filled<T: Clone>(mut buf: Vec<T>, n: usize, fill: T) -> Vec<T> {
    buf.clear();
    buf.resize(n, fill);
    buf
}

impl Analyses {
    /// The dominator tree, computed once per CFG (only `merge_blocks` changes edges).
    pub fn dom(&mut self, shader: &Shader) -> &DomTree {
        if cfg!(debug_assertions)
            && let Some(dom) = &self.dom
        {
            assert!(*dom == DomTree::compute(shader), "a pass changed the CFG without saying so");
        }
        self.dom.get_or_insert_with(|| DomTree::compute(shader))
    }

    /// Forgets everything computed from the CFG.
    pub fn cfg_changed(&mut self) {
        self.dom = None;
    }

    /// Whether [`optimize`] reached its fixed point (false when it stopped at its round limit):
    /// then, for one, the shader has no dead code.
    pub fn converged(&self) -> bool {
        self.converged
    }
}

/// A pass: rewrites the shader in place and says what it did.
type Pass = fn(&mut Shader, &mut Analyses) -> Outcome;

/// The pipeline, in order: each pass with the passes its changes can give new work to.
///
/// A pass that found nothing is not run again until one of the passes listed as enabling it
/// changes the IR; a pass that changed the IR is run again later unless it is listed as
/// idempotent (a second run right after it would find nothing). The relations below are the
/// reasons a pass's opportunities can appear; debug builds check every skip (see [`optimize`]).
///
/// * `merge_blocks` changes the CFG, turns φs into copies and moves instructions: it enables
///   everything else. It is the only pass that touches the CFG and it merges to a fixed point
///   itself (idempotent), so nothing enables it again.
/// * `copy_prop` renames uses and puts constants into sources (new constant operands, identical
///   instructions, `FADD x, −0` patterns, dead definitions): everything but `merge_blocks`. It
///   is idempotent: it forwards every register copy, removes trivial φs to a fixed point under
///   the forwarding, and propagates every constant copy it can; none of that creates a copy.
/// * `const_fold` turns instructions into `copy #k` (propagated by `copy_prop`, dead inputs for
///   `dce`), and folds chains in layout order (itself, when a use precedes its
///   definition in the layout). It only removes uses of values defined by copies, which are
///   never the single-use producers `mod_fold` and `fma` look for.
/// * `simplify` turns instructions into copies (work for `copy_prop` and `const_fold`, only if
///   the run made one) and `FMA a, ±1, c` into `FADD ±a, c` (work for `mod_fold` and `fma`;
///   not for `const_fold`: an `FADD` of constants comes from an `FMA` of the same
///   constants, which `const_fold` would have folded). It removes a read of a value only when
///   a rule reads past a source's definition (byte and half-word conversions; the run reports
///   it, and then `dce` has work). What a rule makes is offered to the rules again in the same
///   visit, and definitions are visited before their readers, so a run leaves nothing for the
///   next unless a chain of byte reads was longer than a visit follows (the run then reports
///   itself unsettled).
/// * `mod_fold` rewrites sources and opcodes: everything but `merge_blocks`. It is not
///   idempotent (a producer forwarded in a run takes no clamp in that run).
/// * `fma` turns an `FADD` into an `FMA` of the product's factors and the addend and kills the
///   product; it is not idempotent (a fused FMA can be a product itself). It creates no copy
///   and renames no use, and its operands keep whole-word reads whole-word (binary32 sources
///   of `FADD.f32` and `FMA.f32` have the same defaults), so it gives `copy_prop` nothing; the
///   factors were already an `FMA`'s first two sources and a ±1 factor would have been
///   `simplify`'s, so nothing for `simplify` either. The fused instruction is new work for
///   `const_fold` only when it reads nothing but constants (reported by the run), and for
///   `mod_fold`, `dce` and itself.
/// * `dce` only removes unused instructions: producers lose readers (`mod_fold`, `fma`, only
///   if their last run held a candidate back for its producer's other readers: every other
///   condition they test is unchanged), and arms lose instructions (`select`); its
///   mark-and-sweep leaves nothing unmarked behind (idempotent).
/// * `select` turns small `if`s into `CSEL`s: it changes the CFG (work for `merge_blocks`) and
///   puts arms and joins into one block, so it can give every other pass work. It is
///   idempotent: an arm it could not convert is too large or holds an instruction it keeps
///   branched, and only a pass that removes or rewrites instructions changes that (every pass
///   but itself enables it: `const_fold`, `simplify` and `fma` included, whose rewrites turn
///   instructions into copies or remove products).
struct Step {
    name: &'static str,
    pass: Pass,
    /// The passes (their bits, see [`MERGE_BLOCKS`] …) a change by this one can give work.
    enables: u16,
    idempotent: bool,
    /// A change can add, remove or redirect CFG edges (drops the cached analyses).
    changes_cfg: bool,
}

// Bit `k` stands for `PIPELINE[k]` (a fixed position each, so the scheduler needs no lookup).
const MERGE_BLOCKS: u16 = 1 << 0;
const COPY_PROP: u16 = 1 << 1;
const CONST_FOLD: u16 = 1 << 2;
const SIMPLIFY: u16 = 1 << 3;
const MOD_FOLD: u16 = 1 << 4;
const FMA: u16 = 1 << 5;
const DCE: u16 = 1 << 6;
const SELECT: u16 = 1 << 7;
const ALL: u16 = (1 << 8) - 1;
const ALL_BUT_MERGE: u16 = ALL & !MERGE_BLOCKS;

const PIPELINE: [Step; 8] = [
    // In the order of the bits above.
    Step {
        name: "merge_blocks",
        pass: |s, _| Outcome::of(merge_blocks::run(s)),
        enables: ALL_BUT_MERGE,
        idempotent: true,
        changes_cfg: true,
    },
    Step {
        name: "copy_prop",
        pass: |s, a| Outcome::of(copy_prop::run_in(s, &mut a.scratch)),
        enables: ALL_BUT_MERGE,
        idempotent: true,
        changes_cfg: false,
    },
    Step {
        name: "const_fold",
        pass: |s, a| Outcome::of(const_fold::run_in(s, &mut a.scratch)),
        enables: COPY_PROP | CONST_FOLD | DCE | SELECT,
        idempotent: false,
        changes_cfg: false,
    },
    Step {
        name: "simplify",
        pass: |s, _| simplify::run_reporting(s),
        enables: COPY_PROP | CONST_FOLD | MOD_FOLD | FMA | SELECT,
        idempotent: false,
        changes_cfg: false,
    },
    Step {
        name: "mod_fold",
        pass: mod_fold::run_reporting,
        enables: ALL_BUT_MERGE,
        idempotent: false,
        changes_cfg: false,
    },
    Step {
        name: "fma",
        pass: |s, a| fma::run_reporting(s, &mut a.scratch),
        enables: CONST_FOLD | MOD_FOLD | FMA | DCE | SELECT,
        idempotent: false,
        changes_cfg: false,
    },
    Step {
        name: "dce",
        pass: |s, a| Outcome::of(dce::run_in(s, &mut a.scratch)),
        enables: MOD_FOLD | FMA | SELECT,
        idempotent: true,
        changes_cfg: false,
    },
    Step {
        name: "select",
        pass: |s, _| Outcome::of(select::run(s)),
        enables: ALL & !SELECT,
        idempotent: true,
        changes_cfg: true,
    },
];

/// Runs the passes to a fixed point (bounded: each round is linear, and rounds stop as soon as
/// nothing changes; a handful suffice). A pass runs only when it may have new work: after it
/// changed the IR itself (unless idempotent), or after a pass that can enable it changed the IR
/// (see [`Step`]); skipping the others gives the same result as running them, since they would
/// change nothing. Debug builds run every skipped pass on a copy and check exactly that.
///
/// Returns the analyses of the final shader (so far its dominator tree, when one was needed),
/// valid while its CFG stays as it is: legalisation and `cse` after it can reuse them.
pub fn optimize(shader: &mut Shader, options: &Options) -> Analyses {
    // Without contraction `fma` never runs.
    let enabled = if options.contract { ALL } else { ALL & !FMA };
    let mut dirty = enabled;
    // Passes among `MOD_FOLD | FMA` whose last run held nothing back for its use count.
    let mut not_held: u16 = 0;
    // What the plain fixed point would run: every pass after any change (debug check only).
    let mut plain_dirty = enabled;
    let mut analyses = Analyses::default();
    for _ in 0..8 {
        let mut changed = false;
        for (k, step) in PIPELINE.iter().enumerate() {
            let this = 1u16 << k;
            if dirty & this == 0 {
                if cfg!(debug_assertions) && plain_dirty & this != 0 {
                    let mut copy = shader.clone();
                    assert!(
                        !(step.pass)(&mut copy, &mut Analyses::default()).changed,
                        "the skipped pass `{}` had work to do",
                        step.name
                    );
                    plain_dirty &= !this;
                }
                continue;
            }
            let outcome = run_step(shader, step, &mut analyses);
            if (MOD_FOLD | FMA) & this != 0 {
                not_held = if outcome.held_by_uses { not_held & !this } else { not_held | this };
            }
            if outcome.changed {
                changed = true;
                let mut enables = step.enables;
                if this == SIMPLIFY && !outcome.copies_made {
                    enables &= !(COPY_PROP | CONST_FOLD);
                }
                if this == SIMPLIFY && outcome.reads_dropped {
                    enables |= DCE;
                }
                if this == FMA && !outcome.constant_fused {
                    enables &= !CONST_FOLD;
                }
                if this == MOD_FOLD {
                    if !outcome.phi_made_trivial {
                        enables &= !COPY_PROP;
                    }
                    if !outcome.constant_moved {
                        enables &= !(CONST_FOLD | SIMPLIFY);
                    }
                }
                if this == DCE {
                    enables &= !not_held;
                }
                dirty |= enables & enabled;
                if step.idempotent || outcome.settled {
                    dirty &= !this;
                } else {
                    dirty |= this;
                }
                plain_dirty = enabled;
            } else {
                dirty &= !this;
                plain_dirty &= !this;
            }
        }
        if !changed {
            analyses.converged = true;
            break;
        }
    }
    analyses
}

/// Whether a φ reading a value that `replace` renames becomes trivial once renamed (its
/// arguments other than itself are one value). With no register copy left, that is exactly
/// `copy_prop`'s test, and the renaming can make no other φ trivial.
fn phi_made_trivial(shader: &Shader, replace: impl Fn(Value) -> Option<Value>) -> bool {
    shader.blocks.iter().any(|block| {
        block.insts.iter().map(|&id| shader.inst(id)).take_while(|inst| inst.kind == InstKind::Phi).any(|phi| {
            let args = shader.get(phi.args);
            if phi.dead || !args.iter().any(|&v| replace(v).is_some()) {
                return false;
            }
            let dest = shader.get(phi.dests)[0];
            let mut others = args.iter().map(|&v| replace(v).unwrap_or(v)).filter(|&v| v != dest);
            let first = others.next();
            first.is_some() && others.all(|v| Some(v) == first)
        })
    })
}

/// The number of reads of each value (operands, φ arguments, branch conditions), in `buf`.
pub(crate) fn use_counts(shader: &Shader, buf: Vec<u32>) -> Vec<u32> {
    let mut uses = filled(buf, shader.values.len(), 0);
    for b in 0..shader.blocks.len() {
        for id in shader.block_insts(Block(b as u32)) {
            shader.for_each_use(shader.inst(id), |v| uses[v.index()] += 1);
        }
        if let Terminator::Branch { cond, .. } = shader.blocks[b].term {
            uses[cond.index()] += 1;
        }
    }
    uses
}

/// Whether `v` is defined by a plain `copy #k` (a constant to `const_fold`).
fn is_literal_copy(shader: &Shader, v: Value) -> bool {
    shader.values[v.index()].def.is_some_and(|d| {
        let def = shader.inst(d);
        def.kind == InstKind::Copy
            && matches!(def.srcs[0].operand, crate::ir::Operand::Const(_))
            && def.srcs[0].is_plain()
    })
}

/// Whether `v` is defined by a copy of a constant or FAU word.
fn is_constant_copy(shader: &Shader, v: Value) -> bool {
    shader.values[v.index()].def.is_some_and(|d| {
        let def = shader.inst(d);
        def.kind == InstKind::Copy && !matches!(def.srcs[0].operand, crate::ir::Operand::Value(_))
    })
}

fn run_step(shader: &mut Shader, step: &Step, analyses: &mut Analyses) -> Outcome {
    let outcome = (step.pass)(shader, analyses);
    if outcome.changed && step.changes_cfg {
        analyses.cfg_changed();
    }
    if outcome.changed {
        verify_after(shader, step.name);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scheduler's bits name the pipeline's steps by position; a reordered pipeline must
    /// move its bits along.
    #[test]
    fn pass_bits_match_pipeline_positions() {
        let named = [
            (MERGE_BLOCKS, "merge_blocks"),
            (COPY_PROP, "copy_prop"),
            (CONST_FOLD, "const_fold"),
            (SIMPLIFY, "simplify"),
            (MOD_FOLD, "mod_fold"),
            (FMA, "fma"),
            (DCE, "dce"),
            (SELECT, "select"),
        ];
        for (bit, name) in named {
            assert_eq!(PIPELINE[bit.trailing_zeros() as usize].name, name);
        }
        assert_eq!(ALL.count_ones() as usize, PIPELINE.len());
    }
}
