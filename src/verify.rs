//! Differential testing: compile a shader, run the TGSI interpreter and the Valhall emulator on
//! the same seeded inputs, and compare their outputs.
//!
//! * The shader is compiled without FMA contraction (contraction changes rounding by design;
//!   its correctness is covered by the pass's own tests), otherwise exactly as `compile` does.
//! * Inputs come from [`crate::interp::inputs::generate`], one set per seed.
//! * Each output component is compared with the interpreter's accuracy for it: bit-exact, within
//!   a documented bound (transcendental and reciprocal operations), or unconstrained. Any NaN
//!   equals any NaN. Lanes the interpreter killed, or whose result depends on an approximate
//!   value through a branch, kill or address ("uncertain lanes"), are not compared; killed sets
//!   must agree elsewhere.
//! * Vertex positions: the emulator reports the screen-space position the hardware consumes;
//!   the interpreter's clip-space position is put through the same transform (viewport scale 1,
//!   offset 0, docs/metadata.md) before comparing. Point sizes are rounded through binary16.
//! * Buffers and images (their final contents, `exec::image`) are compared word by word.

use crate::diag::Diagnostics;
use crate::exec::LANES;
use crate::exec::io::{Inputs, Outputs, RegKey};
use crate::interp::{self, Accuracy};
use crate::lower::Gpu;
use std::fmt;

/// The coverage mask the emulator preloads (one sample).
const COVERAGE: u32 = 1;

/// Verification options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Number of input sets.
    pub seeds: u32,
    /// Seed of the first input set (the others follow).
    pub first_seed: u64,
    pub gpu: Gpu,
}

impl Default for Options {
    fn default() -> Options {
        Options { seeds: 4, first_seed: 1, gpu: Gpu::DEFAULT }
    }
}

/// One differing output component.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub seed: u64,
    /// What differs, e.g. `OUT[0] lane 2 .y` or `BUFFER[0] word 5` or `killed lanes`.
    pub what: String,
    pub interp: u32,
    pub emu: u32,
    pub accuracy: Accuracy,
}

impl Mismatch {
    /// Something the interpreter produced and the emulator did not (no values to compare).
    fn missing(seed: u64, what: String) -> Mismatch {
        Mismatch { seed, what, interp: 0, emu: 0, accuracy: Accuracy::Exact }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b) = (f32::from_bits(self.interp), f32::from_bits(self.emu));
        write!(
            f,
            "seed {}: {}: interpreter 0x{:08x} ({a:e}), emulator 0x{:08x} ({b:e}), accuracy {:?}",
            self.seed, self.what, self.interp, self.emu, self.accuracy
        )
    }
}

/// Why a shader could not be verified.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Compile(Diagnostics),
    #[error("interpreter: {0}")]
    Interp(String),
    /// The interpreter reached its step limit (an endless loop for these inputs, or a long one):
    /// nothing is known about the expected outputs, so this is neither a pass nor a mismatch.
    #[error(
        "seed {seed}: inconclusive: the interpreter executed {steps} instructions without reaching END (its step limit)"
    )]
    Inconclusive { seed: u64, steps: u64 },
    #[error("seed {seed}: emulator: {message}")]
    Emu { seed: u64, message: String },
}

/// The outcome for one shader.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Input sets run.
    pub runs: u32,
    /// Components compared (all runs).
    pub compared: u64,
    /// Every mismatch (compare `mismatches.is_empty()` for a pass).
    pub mismatches: Vec<Mismatch>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }
}

/// Compiles `text` and compares interpreter and emulator over `options.seeds` input sets.
pub fn verify(text: &str, options: &Options) -> Result<Report, Error> {
    let program = crate::tgsi::parse(text).map_err(Error::Compile)?;
    let compile_options = crate::compile::Options { gpu: options.gpu, contract: false, print_after: Vec::new() };
    let compiled = crate::compile::compile(text, &compile_options).map_err(Error::Compile)?;
    let mut report = Report::default();
    for k in 0..options.seeds {
        let seed = options.first_seed + u64::from(k);
        let inputs = interp::inputs::generate(&program, seed);
        let run = interp::run(&program, &inputs).map_err(|e| match e {
            interp::InterpError::StepLimit { steps, .. } => Error::Inconclusive { seed, steps },
            e => Error::Interp(e.to_string()),
        })?;
        // The emulator has its own step limit: a loop only it runs forever ends as an error.
        let emulated = crate::emu::run(&compiled.blob, &compiled.meta, &inputs).map_err(|e| Error::Emu {
            seed,
            message: format!("{e} (the interpreter reached END after {} instructions)", run.steps),
        })?;
        compare(seed, &compiled.meta, &inputs, &run, &emulated, &mut report);
        report.runs += 1;
    }
    Ok(report)
}

/// Compares memory word by word (`name` is `BUFFER[i]` or `IMAGE[i]`); a word the emulator
/// lacks reads as 0, a word without an accuracy is exact.
fn compare_words(
    report: &mut Report,
    seed: u64,
    name: &str,
    ours: &[u32],
    theirs: &[u32],
    accuracy: Option<&Vec<Accuracy>>,
) {
    for (w, &mine) in ours.iter().enumerate() {
        report.compared += 1;
        let other = theirs.get(w).copied().unwrap_or(0);
        let acc = accuracy.and_then(|a| a.get(w).copied()).unwrap_or(Accuracy::Exact);
        if !acc.accepts(mine, other) {
            report.mismatches.push(Mismatch {
                seed,
                what: format!("{name} word {w}"),
                interp: mine,
                emu: other,
                accuracy: acc,
            });
        }
    }
}

fn compare(
    seed: u64,
    meta: &crate::emit::meta::Metadata,
    _inputs: &Inputs,
    run: &interp::Run,
    emu: &Outputs,
    report: &mut Report,
) {
    let uncertain = |lane: usize| run.uncertain_lanes.contains(&(lane as u32));
    let killed_interp = |lane: usize| run.outputs.killed.contains(&(lane as u32));
    // Killed lanes must agree where the interpreter is certain.
    for lane in 0..LANES {
        if uncertain(lane) {
            continue;
        }
        let (a, b) = (killed_interp(lane), emu.killed.contains(&(lane as u32)));
        if a != b {
            report.mismatches.push(Mismatch {
                seed,
                what: format!("lane {lane} killed: interpreter {a}, emulator {b}"),
                interp: u32::from(a),
                emu: u32::from(b),
                accuracy: Accuracy::Exact,
            });
        }
    }
    let kind_of = |reg: &RegKey| meta.outputs.iter().find(|o| o.register == reg.to_string()).map(|o| o.kind.as_str());
    // A written sample mask is ANDed with the coverage (one sample in the emulator, mask 1): a
    // lane left without coverage writes nothing.
    let mask_reg = meta.outputs.iter().find(|o| o.kind == "sample_mask").and_then(|o| RegKey::parse(&o.register).ok());
    let uncovered =
        |lane: usize| mask_reg.and_then(|r| run.outputs.outputs.get(&r)).is_some_and(|m| m[lane][0] & COVERAGE == 0);
    for (reg, lanes) in &run.outputs.outputs {
        // Only outputs the shader hands to the hardware are observable.
        let kind = kind_of(reg);
        let varying = meta.varyings.iter().any(|v| v.register == reg.to_string());
        if kind.is_none() && !varying {
            continue;
        }
        let Some(theirs) = emu.outputs.get(reg) else {
            report.mismatches.push(Mismatch::missing(seed, format!("{reg}: the emulator produced no value")));
            continue;
        };
        let accuracy = run.accuracy.get(reg);
        for lane in 0..LANES {
            if uncertain(lane) || killed_interp(lane) || (uncovered(lane) && kind != Some("sample_mask")) {
                continue;
            }
            let acc = |c: usize| accuracy.map_or(Accuracy::Exact, |a| a[lane][c]);
            let (expected, accs): ([u32; 4], [Accuracy; 4]) = match kind {
                Some("position") => screen_position(lanes[lane], std::array::from_fn(acc)),
                Some("point_size") => {
                    let rounded = half::f16::from_f32(f32::from_bits(lanes[lane][0])).to_f32().to_bits();
                    (
                        [rounded, 0, 0, 0],
                        [acc(0), Accuracy::Unconstrained, Accuracy::Unconstrained, Accuracy::Unconstrained],
                    )
                }
                Some("depth") => (
                    [0, 0, lanes[lane][2], 0],
                    [Accuracy::Unconstrained, Accuracy::Unconstrained, acc(2), Accuracy::Unconstrained],
                ),
                Some("stencil") => (
                    [0, lanes[lane][1], 0, 0],
                    [Accuracy::Unconstrained, acc(1), Accuracy::Unconstrained, Accuracy::Unconstrained],
                ),
                Some("sample_mask") => (
                    [lanes[lane][0] & COVERAGE, 0, 0, 0],
                    [acc(0), Accuracy::Unconstrained, Accuracy::Unconstrained, Accuracy::Unconstrained],
                ),
                _ => (lanes[lane], std::array::from_fn(acc)),
            };
            for c in 0..4 {
                report.compared += 1;
                let ours = expected[c];
                let other = theirs[lane][c];
                if !accs[c].accepts(ours, other) {
                    report.mismatches.push(Mismatch {
                        seed,
                        what: format!("{reg} lane {lane} .{}", ['x', 'y', 'z', 'w'][c]),
                        interp: ours,
                        emu: other,
                        accuracy: accs[c],
                    });
                }
            }
        }
    }
    for (index, words) in &run.outputs.buffers {
        let Some(theirs) = emu.buffers.get(index) else { continue };
        compare_words(report, seed, &format!("BUFFER[{index}]"), words, theirs, run.buffer_accuracy.get(index));
    }
    // Final image contents, word by word (every image the interpreter holds must be bound).
    for (index, words) in &run.outputs.images {
        let Some(theirs) = emu.images.get(index) else {
            report.mismatches.push(Mismatch::missing(seed, format!("IMAGE[{index}]: the emulator has no such image")));
            continue;
        };
        compare_words(report, seed, &format!("IMAGE[{index}]"), words, theirs, run.image_accuracy.get(index));
    }
}

/// The screen-space position of docs/metadata.md for viewport scale 1 and offset 0:
/// `w' = clamp(rcp(w), ±32768)`, `x' = fma(x·w', 1, 0)`, with the accuracy of the inputs
/// carried through.
fn screen_position(clip: [u32; 4], acc: [Accuracy; 4]) -> ([u32; 4], [Accuracy; 4]) {
    let f = |c: usize| f32::from_bits(clip[c]);
    let rcp = 1.0 / f(3);
    let w = if rcp.is_nan() { -32768.0 } else { rcp.clamp(-32768.0, 32768.0) };
    let mut out = [0u32; 4];
    let mut accs = [Accuracy::Exact; 4];
    let w_err = reciprocal_error(f(3), acc[3]);
    for c in 0..3 {
        let scaled = f(c) * w;
        out[c] = scaled.mul_add(1.0, 0.0).to_bits();
        accs[c] = combine(acc[c], w_err, f(c), w, scaled);
    }
    out[3] = w.to_bits();
    accs[3] = match w_err {
        None => Accuracy::Unconstrained,
        Some(0.0) => Accuracy::Exact,
        Some(e) => Accuracy::Within(crate::interp::value::err32(e * 1.01) + f32::MIN_POSITIVE),
    };
    (out, accs)
}

/// The distance between the interpreter's and the emulator's `clamp(1/W)` when W is within
/// `acc` of `big_w`: the reciprocal's change over W's interval (the clamp only shrinks it) plus
/// one ulp of w for the two roundings of 1/W (each half an ulp). `Some(0)` when W is exact,
/// `None` when unbounded (W unconstrained, or its interval reaches 0).
fn reciprocal_error(big_w: f32, acc: Accuracy) -> Option<f64> {
    let e = match acc {
        Accuracy::Exact => return Some(0.0),
        Accuracy::Unconstrained => return None,
        Accuracy::Within(e) => e as f64,
    };
    let a = (big_w as f64).abs();
    if !a.is_finite() || a <= e {
        return None;
    }
    let w = (1.0 / big_w).clamp(-32768.0, 32768.0);
    Some(e / (a * (a - e)) + crate::interp::value::ulp(w))
}

/// The accuracy of `x' = x · w` (`scaled`, rounded) from x's accuracy and w's error.
fn combine(a: Accuracy, w_err: Option<f64>, x: f32, w: f32, scaled: f32) -> Accuracy {
    let Some(ew) = w_err else { return Accuracy::Unconstrained };
    let ea = match a {
        Accuracy::Exact if ew == 0.0 => return Accuracy::Exact,
        Accuracy::Exact => 0.0,
        Accuracy::Within(e) => e as f64,
        Accuracy::Unconstrained => return Accuracy::Unconstrained,
    };
    // Propagated errors, plus one ulp of x' for the products' roundings (half an ulp each).
    let (x, w) = (x.abs() as f64, w.abs() as f64);
    let e = ea * w + ew * x + ea * ew + crate::interp::value::ulp(scaled);
    Accuracy::Within(crate::interp::value::err32(e * 1.01) + f32::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screen_position_bounds_an_approximate_w() {
        // w = 2 within 1 ulp (2^-22): 1/w = 0.5 may move by 2^-22/4 (+ an ulp of 0.5 for the
        // roundings), x' = 3·0.5 by 3 times that plus an ulp of 1.5.
        let clip = [3f32, 1.0, 0.0, 2.0].map(f32::to_bits);
        let w_err = 2f32.powi(-22);
        let acc = [Accuracy::Exact, Accuracy::Exact, Accuracy::Exact, Accuracy::Within(w_err)];
        let (out, accs) = screen_position(clip, acc);
        assert_eq!(out, [1.5f32, 0.5, 0.0, 0.5].map(f32::to_bits));
        let ew = w_err as f64 / (2.0 * (2.0 - w_err as f64)) + 2f64.powi(-24);
        let Accuracy::Within(ex) = accs[0] else { panic!("x' must be approximate") };
        let expected = (3.0 * ew + 2f64.powi(-23)) * 1.01;
        assert!((ex as f64 - expected).abs() < 1e-12, "{ex} vs {expected}");
        // Two ulps of x' (the failing case of tests/diff_cases/vs_position_accuracy.tgsi) pass.
        assert!(accs[0].accepts(out[0], out[0] + 2));
        assert_eq!(accs[2], Accuracy::Within(f32::MIN_POSITIVE + crate::interp::value::err32(2f64.powi(-149) * 1.01)));
        assert_eq!(screen_position(clip, [Accuracy::Exact; 4]).1, [Accuracy::Exact; 4]);
        let near_zero = [Accuracy::Exact, Accuracy::Exact, Accuracy::Exact, Accuracy::Within(3.0)];
        assert_eq!(screen_position(clip, near_zero).1, [Accuracy::Unconstrained; 4]);
    }
}
