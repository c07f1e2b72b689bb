//! Register allocation: SSA IR (after legalisation) → [`MachShader`] on physical registers.
//!
//! ```text
//!  ir::Shader ─prepare─► ir (preloads first, critical edges split)
//!     ─spill (if the demand exceeds the register file)─► ir + TLS spill code
//!     ─assign (SSA order, live-range splits at constraints, φ copies on edges)─► MachShader
//!     ─check (symbolic: every read sees its value)─► remove empty edge blocks ─► MachShader
//! ```
//!
//! The 32-register mode (r0–r15 ∪ r48–r63, two threads per core) is tried first; when the
//! program does not fit without spilling, it is allocated on all 64 registers, spilling only if
//! even that is too small. See `docs/backend.md` for the algorithm and its invariants.

pub mod assign;
pub mod check;
pub mod loops;
pub mod mach;
pub mod parcopy;
pub mod prepare;
pub mod spill;

pub use mach::{MachBlock, MachInst, MachShader, MachTerm, Origin, Reg};

use crate::ir::liveness::Liveness;
use crate::ir::{Block, InstKind, Shader};
use assign::{AssignError, Assigner};
use mach::regs;

/// Register-allocation options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Try the 32-register mode first (default true).
    pub allow_32: bool,
    /// Bytes of thread-local storage the program already uses (scratch arrays); spill slots go
    /// after them.
    pub tls_base: u32,
    /// Run the checker (always on in tests and debug builds).
    pub check: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { allow_32: true, tls_base: 0, check: cfg!(debug_assertions) }
    }
}

/// Why allocation failed (the input breaks the contract, or it cannot be allocated at all).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("register allocation: {0}")]
    Invalid(String),
    #[error("register allocation: out of registers even with spilling: {0}")]
    OutOfRegisters(String),
}

/// The allocation and the IR it was made for (the prepared and spilled copy of the input).
pub struct Allocation {
    pub mach: MachShader,
    pub shader: Shader,
    pub spill: spill::SpillInfo,
}

/// Allocates registers for a verified, legalised shader (a copy of it: see [`allocate_owned`]).
pub fn allocate(input: &Shader, options: &Options) -> Result<Allocation, Error> {
    allocate_owned(input.clone(), options)
}

/// [`allocate`] for a caller that no longer needs the shader: it is prepared in place, which
/// saves copying it (a few per cent of a whole compile).
pub fn allocate_owned(input: Shader, options: &Options) -> Result<Allocation, Error> {
    let prepared = prepare::prepare_owned(input);
    if (options.check || cfg!(debug_assertions))
        && let Err(errors) = crate::ir::verify::verify(&prepared.shader)
    {
        panic!("regalloc::prepare broke the IR:\n{}\n{}", errors.join("\n"), crate::ir::text::print(&prepared.shader));
    }
    // The prepared shader is allocated as it is unless it needs spilling: its liveness serves
    // the demand and those attempts, and it is moved (not copied) into the result.
    let live = Liveness::compute(&prepared.shader);
    let no_spill = spill::SpillInfo::default();
    // The 32-register mode is used when the demand fits 32 registers and the assignment
    // succeeds. The assignment measures the demand as it goes, so it is attempted first: when
    // it succeeds within 32, the separate demand walk is not needed (most shaders).
    // The attempt stops as soon as the demand it measures exceeds 32 (its result would be
    // discarded); `attempt_32` then stays `None`, so that if the full demand walk below finds
    // 32 registers enough after all, the attempt is made again in full.
    let mut attempt_32 = None;
    if options.allow_32 && !surely_over_32(&prepared.shader, &live) {
        match try_assign(&prepared, &prepared.shader, &live, regs::SPLIT32, &no_spill, options, 32) {
            Ok((mach, measured)) if measured <= 32 => {
                debug_assert_eq!(
                    spill::demand_within(&prepared.shader, &live, 64),
                    spill::Demand::Fits(measured),
                    "the demand measured by the assignment"
                );
                return Ok(Allocation { mach, shader: prepared.shader, spill: no_spill });
            }
            Err(AssignError::OverDemandLimit) => {}
            attempt => attempt_32 = Some(attempt),
        }
    }
    // The demand matters up to the full register file; beyond it, the walk that measured it
    // has chosen the first values to spill.
    let (demand, mut first_victims) = match spill::demand_within(&prepared.shader, &live, 64) {
        spill::Demand::Fits(d) => (d, None),
        spill::Demand::Exceeds(victims) => (u32::MAX, Some(victims)),
    };
    let mut last_error = String::new();
    if options.allow_32 && demand <= 32 {
        // Here the attempt above failed (a successful one measured this same demand).
        let attempt = match attempt_32 {
            Some(Err(e)) => Err(e),
            _ => try_assign(&prepared, &prepared.shader, &live, regs::SPLIT32, &no_spill, options, u32::MAX),
        };
        match attempt {
            Ok((mach, _)) => return Ok(Allocation { mach, shader: prepared.shader, spill: no_spill }),
            Err(AssignError::Invalid(e)) => return Err(Error::Invalid(e)),
            Err(AssignError::OutOfRegisters(e)) => last_error = e,
            // (Only the first attempt has a demand limit.)
            Err(AssignError::OverDemandLimit) => last_error = "register demand over the limit".into(),
        }
    }
    let aligned_base = options.tls_base.div_ceil(16) * 16;
    let mut budget = 64u32;
    while budget >= 24 {
        let mut info = spill::SpillInfo { tls_end: aligned_base, ..Default::default() };
        let result = if demand > budget || budget < 64 {
            let mut shader = prepared.shader.clone();
            let first = if budget == 64 { first_victims.take() } else { None };
            let spilled = spill::spill(&mut shader, budget, &mut info, &live, first).map_err(Error::OutOfRegisters)?;
            try_assign(&prepared, &shader, spilled.as_ref().unwrap_or(&live), regs::ALL, &info, options, u32::MAX)
                .map(|(mach, _)| Allocation { mach, shader, spill: info })
        } else {
            match try_assign(&prepared, &prepared.shader, &live, regs::ALL, &info, options, u32::MAX) {
                Ok((mach, _)) => return Ok(Allocation { mach, shader: prepared.shader, spill: info }),
                Err(e) => Err(e),
            }
        };
        match result {
            Ok(a) => return Ok(a),
            Err(AssignError::Invalid(e)) => return Err(Error::Invalid(e)),
            Err(AssignError::OutOfRegisters(e)) => last_error = e,
            // (Only the first attempt has a demand limit.)
            Err(AssignError::OverDemandLimit) => last_error = "register demand over the limit".into(),
        }
        budget -= 4;
    }
    Err(Error::OutOfRegisters(last_error))
}

/// Whether the register demand (see `spill`) certainly exceeds 32: the values live out of a
/// block that has instructions are live after its last one, so its demand is at least their
/// number. (Spares a doomed 32-register attempt for shaders under high pressure.)
fn surely_over_32(shader: &Shader, live: &Liveness) -> bool {
    (0..shader.blocks.len() as u32)
        .map(Block)
        .any(|b| live.live_out(b).len() > 32 && shader.block_insts(b).any(|id| shader.inst(id).kind != InstKind::Phi))
}

/// Assigns registers to `shader` (the prepared shader, possibly with spill code; `live` is its
/// liveness). Also returns the largest register demand (see `spill`) of an instruction; gives
/// up with [`AssignError::OverDemandLimit`] as soon as that demand exceeds `demand_limit`.
fn try_assign(
    prepared: &prepare::Prepared,
    shader: &Shader,
    live: &Liveness,
    allowed: u64,
    spill: &spill::SpillInfo,
    options: &Options,
    demand_limit: u32,
) -> Result<(MachShader, u32), AssignError> {
    // Straight-line code (one block, no edge; most shaders) needs no dominator tree: the block
    // is the whole order, and there is no loop and no unreachable block.
    let straight = shader.blocks.len() == 1 && shader.blocks[0].preds.is_empty();
    // The tree `prepare` computed still describes the prepared shader when preparing left the
    // control flow alone (spill code adds no block either, but only the prepared shader
    // itself is trusted here).
    let computed;
    let dom: Option<&crate::ir::dom::DomTree> = if straight {
        None
    } else if let Some(d) = prepared.dom.as_ref().filter(|_| std::ptr::eq(shader, &prepared.shader)) {
        debug_assert_eq!(d.rpo, crate::ir::dom::DomTree::compute(shader).rpo, "the tree kept by prepare");
        Some(d)
    } else {
        computed = crate::ir::dom::DomTree::compute(shader);
        Some(&computed)
    };
    let rpo: &[Block] = dom.map_or(&[Block(0)], |d| &d.rpo);
    let assigned = Assigner::new(shader, live, allowed).with_demand_limit(demand_limit).run(&prepared.layout, rpo)?;
    let mut blocks = assigned.blocks;
    let mut max_demand = assigned.max_demand;
    let mut loops = 0;
    if let Some(dom) = dom {
        // The assignment measured the blocks it visited.
        let unvisited: Vec<Block> = (0..shader.blocks.len() as u32)
            .map(Block)
            .filter(|&b| !dom.is_reachable(b) && shader.block_insts(b).next().is_some())
            .collect();
        max_demand = max_demand.max(spill::demand_of(shader, live, &unvisited));
        let depths = crate::ir::dom::loop_depths(shader, dom);
        loops = dom.rpo.iter().filter(|&&h| shader.block(h).preds.iter().any(|&p| dom.dominates(h, p))).count() as u32;
        for b in &mut blocks {
            if let Some(ir) = b.ir_block {
                b.loop_depth = depths[ir as usize];
            }
        }
    }
    // Every register the assignment writes or reads lies in `allowed` (the checker verifies it),
    // so the mode follows from `allowed` without scanning the instructions.
    let work_registers = if allowed == regs::SPLIT32 { 32 } else { 64 };
    debug_assert!(
        blocks.iter().flat_map(|b| b.insts.iter()).all(|i| check::registers_touched(&i.instr) & !allowed == 0),
        "a register outside the allowed set"
    );
    let tls_size = if spill.slot_of.is_empty() { 0 } else { spill.tls_end.div_ceil(16) * 16 };
    let mut mach = MachShader {
        stage: shader.stage,
        blocks,
        work_registers,
        preload: assigned.preload,
        spills: spill.spills,
        fills: spill.fills,
        tls_size,
        loops,
        laid_out: false,
    };
    if options.check || cfg!(test) {
        // (Otherwise the predecessors are computed once, after removing empty edge blocks.)
        mach.recompute_preds();
        if let Err(errors) = check::check(shader, &mach, spill, allowed) {
            panic!(
                "regalloc: the checker rejected the allocation:\n  {}\n{}\n{}",
                errors.join("\n  "),
                crate::ir::text::print(shader),
                mach.print()
            );
        }
    }
    remove_empty_edge_blocks(&mut mach, &prepared.split);
    Ok((mach, max_demand))
}

/// Drops blocks made by edge splitting that received no copies: their predecessor branches
/// straight to their successor.
fn remove_empty_edge_blocks(mach: &mut MachShader, split: &[bool]) {
    let n = mach.blocks.len();
    if !split.contains(&true) {
        mach.recompute_preds();
        return;
    }
    let mut redirect: Vec<usize> = (0..n).collect();
    let mut keep = vec![true; n];
    for (i, b) in mach.blocks.iter().enumerate() {
        let is_split = b.ir_block.is_some_and(|ir| split.get(ir as usize).copied().unwrap_or(false));
        if is_split
            && b.insts.is_empty()
            && let MachTerm::Jump(t) = b.term
        {
            redirect[i] = t;
            keep[i] = false;
        }
    }
    // Chains cannot occur (a split block jumps to an original block), but resolve anyway.
    for i in 0..n {
        let mut t = redirect[i];
        let mut guard = 0;
        while redirect[t] != t && guard < n {
            t = redirect[t];
            guard += 1;
        }
        redirect[i] = t;
    }
    let mut new_index = vec![usize::MAX; n];
    let mut next = 0;
    for i in 0..n {
        if keep[i] {
            new_index[i] = next;
            next += 1;
        }
    }
    let map = |t: usize| new_index[redirect[t]];
    let old = std::mem::replace(&mut mach.blocks, Vec::with_capacity(next));
    for (i, mut b) in old.into_iter().enumerate() {
        if !keep[i] {
            continue;
        }
        b.term = match b.term {
            MachTerm::Jump(t) => MachTerm::Jump(map(t)),
            MachTerm::Branch { cond, if_zero, taken, fallthrough } => {
                MachTerm::Branch { cond, if_zero, taken: map(taken), fallthrough: map(fallthrough) }
            }
            MachTerm::End => MachTerm::End,
        };
        mach.blocks.push(b);
    }
    mach.recompute_preds();
}
