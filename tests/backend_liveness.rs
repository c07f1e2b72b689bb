//! `ir::liveness` against a textbook reference: on the prepared IR of every sample (as the
//! register allocator sees it), the live-out sets and the derived live-in sets must equal those
//! of backward data-flow iterated to a fixed point.

use std::collections::BTreeSet;
use std::path::PathBuf;
use tgsi2va::compile::{Options, compile_to_ir};
use tgsi2va::ir::liveness::Liveness;
use tgsi2va::ir::{Block, InstKind, Shader, Terminator, Value};
use tgsi2va::regalloc::spill::{self, SpillInfo};

#[path = "common/files.rs"]
mod files;
use files::collect_tgsi;

/// Live-in and live-out sets by round-robin iteration of
/// `in(b) = uses(b) ∪ (out(b) − defs(b))`, `out(b) = ∪ in(s) ∪ φ-arguments of s for b ∪ cond(b)`.
fn reference(s: &Shader) -> (Vec<BTreeSet<Value>>, Vec<BTreeSet<Value>>) {
    let n = s.blocks.len();
    let mut uses = vec![BTreeSet::new(); n];
    let mut defs = vec![BTreeSet::new(); n];
    let mut phi_args = vec![BTreeSet::new(); n]; // read at the end of the block
    for b in 0..n {
        for id in s.block_insts(Block(b as u32)) {
            let inst = s.inst(id);
            if inst.kind == InstKind::Phi {
                for (&a, p) in s.get(inst.args).iter().zip(&s.blocks[b].preds) {
                    phi_args[p.index()].insert(a);
                }
            } else {
                s.for_each_use(inst, |v| {
                    if !defs[b].contains(&v) {
                        uses[b].insert(v);
                    }
                });
            }
            s.for_each_def(inst, |v| {
                defs[b].insert(v);
            });
        }
        if let Terminator::Branch { cond, .. } = s.blocks[b].term {
            phi_args[b].insert(cond);
        }
    }
    let mut live_in = vec![BTreeSet::new(); n];
    let mut live_out = vec![BTreeSet::new(); n];
    loop {
        let mut changed = false;
        for b in (0..n).rev() {
            let mut out = phi_args[b].clone();
            for succ in s.succs(Block(b as u32)) {
                out.extend(live_in[succ.index()].iter().copied());
            }
            let mut inn = uses[b].clone();
            inn.extend(out.iter().filter(|v| !defs[b].contains(v)).copied());
            if out != live_out[b] || inn != live_in[b] {
                changed = true;
                live_out[b] = out;
                live_in[b] = inn;
            }
        }
        if !changed {
            return (live_in, live_out);
        }
    }
}

fn compare(name: &str, s: &Shader, layout: &[Block], live: &Liveness) {
    let (want_in, want_out) = reference(s);
    for &b in layout {
        let got_out: Vec<Value> = live.live_out(b).to_vec();
        let want: Vec<Value> = want_out[b.index()].iter().copied().collect();
        assert_eq!(got_out, want, "{name}: live-out of {b}");
        let want: Vec<Value> = want_in[b.index()].iter().copied().collect();
        assert_eq!(live.live_in(s, b), want, "{name}: live-in of {b}");
    }
}

/// Checks the prepared shader, then the same shader spilled to a 24-register budget (spill code
/// adds short live ranges and reloads at block ends); returns the number of blocks and whether
/// anything was spilled.
fn check(name: &str, shader: &Shader) -> (usize, bool) {
    let prepared = tgsi2va::regalloc::prepare::prepare(shader);
    let live = Liveness::compute(&prepared.shader);
    compare(name, &prepared.shader, &prepared.layout, &live);
    let mut spilled = prepared.shader.clone();
    let mut info = SpillInfo::default();
    if let Ok(Some(after)) = spill::spill(&mut spilled, 24, &mut info, &live, None) {
        compare(&format!("{name}, spilled"), &spilled, &prepared.layout, &after);
        return (prepared.layout.len(), true);
    }
    (prepared.layout.len(), false)
}

#[test]
fn liveness_matches_iterated_data_flow_on_every_sample() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples");
    let mut samples = Vec::new();
    collect_tgsi(&dir, &mut samples);
    let (mut shaders, mut blocks, mut spilled) = (0, 0, 0);
    for path in &samples {
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(ir) = compile_to_ir(&text, &Options::default()) else { continue };
        for (variant, shader) in &ir.variants {
            let (n, did_spill) = check(&format!("{} ({variant})", path.display()), shader);
            blocks += n;
            shaders += 1;
            spilled += usize::from(did_spill);
        }
    }
    // A coverage floor: enough variants, blocks and spilling variants (nine since cube maps
    // use the hardware's cube instructions) that the comparison means something.
    assert!(
        shaders >= 80 && blocks > 300 && spilled >= 9,
        "only {shaders} shaders with {blocks} blocks checked, {spilled} of them spilled"
    );
}

/// `spill::demand_within`: below the budget it reports the exact largest demand (the same as
/// with no budget); above it, the victims it returns make `spill` produce exactly the program
/// it produces when it chooses them itself.
#[test]
fn demand_walk_hands_its_victims_to_spill_unchanged() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples");
    let mut samples = Vec::new();
    collect_tgsi(&dir, &mut samples);
    let mut exceeded = 0;
    for path in &samples {
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(ir) = compile_to_ir(&text, &Options::default()) else { continue };
        for (variant, shader) in &ir.variants {
            let name = format!("{} ({variant})", path.display());
            let prepared = tgsi2va::regalloc::prepare::prepare(shader);
            let s = &prepared.shader;
            let live = Liveness::compute(s);
            let spill::Demand::Fits(max) = spill::demand_within(s, &live, u32::MAX) else {
                panic!("{name}: an unlimited budget was exceeded");
            };
            assert_eq!(spill::demand_within(s, &live, max), spill::Demand::Fits(max), "{name}");
            for budget in [24, max.saturating_sub(1).max(24)] {
                let spill::Demand::Exceeds(victims) = spill::demand_within(s, &live, budget) else {
                    assert!(max <= budget, "{name}: demand {max} fits {budget}");
                    continue;
                };
                exceeded += 1;
                let (mut own, mut handed) = (s.clone(), s.clone());
                let (mut own_info, mut handed_info) = (SpillInfo::default(), SpillInfo::default());
                let a = spill::spill(&mut own, budget, &mut own_info, &live, None);
                let b = spill::spill(&mut handed, budget, &mut handed_info, &live, Some(victims));
                assert_eq!(a.is_ok(), b.is_ok(), "{name}");
                assert_eq!(tgsi2va::ir::text::print(&own), tgsi2va::ir::text::print(&handed), "{name} at {budget}");
                assert_eq!(own_info.slot_of, handed_info.slot_of, "{name} at {budget}");
            }
        }
    }
    assert!(exceeded >= 10, "only {exceeded} shaders exceeded a budget");
}
