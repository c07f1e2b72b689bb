//! Property tests of the back end: random valid IR programs (straight-line code, diamonds and
//! loops with φs, random register pressure, staging vectors, 64-bit pairs, fixed fragment
//! outputs) are allocated with the checker on, go through flow control, and every instruction
//! must encode (and decode back).

use proptest::prelude::*;
use tgsi2va::emit::blob::{self, Options};
use tgsi2va::ir;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Gen {
    rng: Rng,
    text: Vec<String>,
    next_value: u32,
    block: u32,
}

impl Gen {
    fn value(&mut self) -> u32 {
        self.next_value += 1;
        self.next_value - 1
    }
    fn pick(&mut self, avail: &[u32]) -> u32 {
        avail[self.rng.below(avail.len())]
    }
    fn line(&mut self, s: String) {
        self.text.push(format!("    {s}"));
    }
    fn label(&mut self, b: u32) {
        self.text.push(format!("block{b}:"));
    }

    /// Straight-line code using and extending `avail`.
    fn straight(&mut self, avail: &mut Vec<u32>, n: usize) {
        for _ in 0..n {
            let k = self.rng.below(10);
            match k {
                0..=3 => {
                    let (a, b) = (self.pick(avail), self.pick(avail));
                    let d = self.value();
                    let op = ["FADD.f32", "IADD.s32", "IMUL.i32", "FMIN.f32"][self.rng.below(4)];
                    self.line(format!("%{d} = {op} %{a}, %{b}"));
                    avail.push(d);
                }
                4 => {
                    let d = self.value();
                    let c = self.rng.next() as u32;
                    self.line(format!("%{d} = copy #0x{c:X}"));
                    avail.push(d);
                }
                5 => {
                    let a = self.pick(avail);
                    let d = self.value();
                    let k = self.rng.below(1000);
                    self.line(format!("%{d} = IADD_IMM.i32 %{a}, #0x{k:X}"));
                    avail.push(d);
                }
                6 => {
                    let (d0, d1) = (self.value(), self.value());
                    let o = 8 * self.rng.below(8);
                    self.line(format!("%{d0}, %{d1} = LOAD.i64.unsigned.slot0 u0, offset:{o}"));
                    avail.push(d0);
                    avail.push(d1);
                }
                7 => {
                    let a = self.pick(avail);
                    let ds: Vec<u32> = (0..4).map(|_| self.value()).collect();
                    self.line(format!(
                        "%{}, %{}, %{}, %{} = LD_BUFFER.i128.unsigned.slot0 %{a}, #0x0",
                        ds[0], ds[1], ds[2], ds[3]
                    ));
                    avail.extend(ds);
                }
                8 => {
                    let vals: Vec<u32> = (0..[1, 2, 3, 4][self.rng.below(4)]).map(|_| self.pick(avail)).collect();
                    let ty = ["i32", "i64", "i96", "i128"][vals.len() - 1];
                    let list: Vec<String> = vals.iter().map(|v| format!("%{v}")).collect();
                    self.line(format!("STORE.{ty}.slot0 @{}, u2, offset:0", list.join(":")));
                }
                _ => {
                    let (a, lo, hi) = (self.pick(avail), self.pick(avail), self.pick(avail));
                    if lo != hi {
                        self.line(format!("STORE.i32.slot0 @%{a}, %{lo}:%{hi}, offset:4"));
                    }
                }
            }
        }
    }

    fn cond(&mut self, avail: &[u32]) -> u32 {
        let a = self.pick(avail);
        let c = self.value();
        self.line(format!("%{c} = ICMP_OR.u32.gt.m1 %{a}, u0, #0x0"));
        c
    }
}

fn program(seed: u64, regions: usize, pressure: usize, fragment: bool) -> String {
    let mut g = Gen { rng: Rng(seed | 1), text: Vec::new(), next_value: 0, block: 0 };
    g.text.push(if fragment { "fragment shader".into() } else { "compute shader".into() });
    g.label(0);
    let mut avail = Vec::new();
    for r in [60u8, 61] {
        let v = g.value();
        g.line(format!("%{v} = preload r{r}"));
        avail.push(v);
    }
    let cov = avail[0];
    let mut avail: Vec<u32> = avail[1..].to_vec();
    g.straight(&mut avail, pressure);
    for _ in 0..regions {
        let kind = g.rng.below(3);
        let b = g.block;
        match kind {
            0 => {
                // Diamond: b → (t | e) → j, with φs of values defined in the arms.
                let (t, e, j) = (b + 1, b + 2, b + 3);
                let c = g.cond(&avail);
                g.line(format!("branch.z %{c}, block{e}, block{t}"));
                g.label(t);
                let mut at = avail.clone();
                let len = 1 + g.rng.below(pressure.max(1));
                g.straight(&mut at, len);
                g.line(format!("jump block{j}"));
                g.label(e);
                let mut ae = avail.clone();
                let len = 1 + g.rng.below(pressure.max(1));
                g.straight(&mut ae, len);
                g.line(format!("jump block{j}"));
                g.label(j);
                for _ in 0..1 + g.rng.below(3) {
                    let (x, y) = (g.pick(&at), g.pick(&ae));
                    let p = g.value();
                    g.line(format!("%{p} = phi [%{x}, block{t}], [%{y}, block{e}]"));
                    avail.push(p);
                }
                g.block = j;
            }
            1 => {
                // Loop: b → h ⇄ body, h → exit, with φs that rotate.
                let (h, body, exit) = (b + 1, b + 2, b + 3);
                g.line(format!("jump block{h}"));
                g.label(h);
                let n = 1 + g.rng.below(3);
                let inits: Vec<u32> = (0..n).map(|_| g.pick(&avail)).collect();
                let phis: Vec<u32> = (0..n).map(|_| g.value()).collect();
                let nexts_slot = g.text.len();
                for _ in 0..n {
                    g.text.push(String::new());
                }
                let mut ah = avail.clone();
                ah.extend(&phis);
                let c = g.cond(&ah);
                g.line(format!("branch.z %{c}, block{exit}, block{body}"));
                g.label(body);
                let mut ab = ah.clone();
                let len = 1 + g.rng.below(pressure.max(1));
                g.straight(&mut ab, len);
                // Back-edge values: a rotation of the φs or new values.
                let nexts: Vec<u32> =
                    (0..n).map(|i| if g.rng.below(2) == 0 { phis[(i + 1) % n] } else { g.pick(&ab) }).collect();
                g.line(format!("jump block{h}"));
                for i in 0..n {
                    g.text[nexts_slot + i] =
                        format!("    %{} = phi [%{}, block{b}], [%{}, block{body}]", phis[i], inits[i], nexts[i]);
                }
                g.label(exit);
                avail = ah;
                g.block = exit;
            }
            _ => {
                let len = 1 + g.rng.below(pressure.max(1));
                g.straight(&mut avail, len);
            }
        }
    }
    if fragment {
        let a = g.pick(&avail);
        let cv = g.value();
        g.line(format!("%{cv} = ATEST %{cov}, %{a}, atest_datum.w0"));
        let cols: Vec<String> = (0..4).map(|_| format!("%{}", g.pick(&avail))).collect();
        g.line(format!("BLEND.slot0.v4.auto @{}, blend_descriptor_0.w0, %{cv}, target:0x0", cols.join(":")));
        if g.rng.below(2) == 0 {
            let cols: Vec<String> = (0..4).map(|_| format!("%{}", g.pick(&avail))).collect();
            g.line(format!("BLEND.slot0.v4.auto @{}, blend_descriptor_1.w0, %{cv}, target:0x0", cols.join(":")));
        }
    } else {
        let a = g.pick(&avail);
        g.line(format!("STORE.i32.slot0 @%{a}, u0, offset:0"));
    }
    g.line("end".into());
    g.text.join("\n") + "\n"
}

fn compile(text: &str, allow_32: bool) {
    let shader = ir::text::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    if let Err(errors) = ir::verify::verify(&shader) {
        panic!("generated IR does not verify: {errors:?}\n{text}");
    }
    let mut options = Options::default();
    options.regalloc.check = true;
    options.regalloc.allow_32 = allow_32;
    let c = blob::compile_full(&shader, &options).unwrap_or_else(|e| panic!("{e}\n{text}"));
    for w in c.code.chunks(8) {
        let word = u64::from_le_bytes(w.try_into().unwrap());
        tgsi2va::valhall::decode(word).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    assert!(c.info.work_registers == 32 || c.info.work_registers == 64);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_allocate_and_encode(seed in any::<u64>(), regions in 0usize..5, pressure in 1usize..24, fragment in any::<bool>(), allow_32 in any::<bool>()) {
        compile(&program(seed, regions, pressure, fragment), allow_32);
    }

    #[test]
    fn high_pressure_programs_spill(seed in any::<u64>(), regions in 0usize..3) {
        compile(&program(seed, regions, 90, false), true);
    }
}

/// Cost of the whole back end per 1000 IR instructions (run with
/// `cargo test --release --test backend_props -- --ignored --nocapture`).
#[test]
#[ignore]
fn measure_cost() {
    // A straight-line program where each value reads two of the last 16 (moderate pressure,
    // no spilling), then the random generator's programs (long live ranges, heavy spilling).
    let mut window = String::from("compute shader\nblock0:\n    %0 = preload r60\n");
    for i in 1..4000u32 {
        let a = i.saturating_sub(1 + i % 16);
        let b = i.saturating_sub(1 + (i * 7) % 16);
        window.push_str(&format!("    %{i} = FADD.f32 %{a}, %{b}\n"));
    }
    window.push_str("    STORE.i32.slot0 @%3999, u0, offset:0\n    end\n");
    let cases = [
        (window, 16usize),
        (program(0x1234_5678, 40, 8, false), 8),
        (program(0x1234_5678, 40, 20, false), 20),
        (program(0x1234_5678, 10, 90, false), 90),
    ];
    for (text, pressure) in cases {
        let shader = ir::text::parse(&text).unwrap();
        let n = shader.inst_count();
        let mut options = Options::default();
        options.regalloc.check = false;
        let runs = 50;
        let start = std::time::Instant::now();
        let mut out = None;
        for _ in 0..runs {
            out = Some(blob::compile(&shader, &options).unwrap());
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / runs as f64;
        let info = out.unwrap().1;
        println!(
            "{n} IR instructions (pressure {pressure}): {us:.0} µs, {:.0} µs per 1000 instructions; {}",
            us * 1000.0 / n as f64,
            tgsi2va::emit::stats::line(&info.stats)
        );
    }
}
