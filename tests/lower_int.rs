//! Lowering of the integer, bitwise and conversion opcode families.
//!
//! * Precise output: `tests/lower/int/*.txt` hold TGSI snippets and the IR each lowers to,
//!   exactly (`=== name`, the TGSI text, `---`, the IR). `BLESS=1 cargo test --test lower_int`
//!   rewrites the IR parts; every expectation was reviewed by hand — they are the spec of what
//!   we emit.
//! * Values: `eval.rs` evaluates the emitted IR (one invocation, the colour given to BLEND) and
//!   the tests compare it with the semantics of docs/lowering.md and the module docs of
//!   `src/lower/{int,bits,convert}.rs` on edge cases and thousands of pseudo-random operands —
//!   the division sequence also with a reciprocal that is off by a few ulps.
//! * Every lowered shader passes `ir::verify::verify`.

#[path = "lower/int/eval.rs"]
mod eval;

#[path = "lower/harness.rs"]
mod harness;

use harness::{expectations, lower};
use pretty_assertions::assert_eq;
use tgsi2va::ir::text::print;
use tgsi2va::lower::{Lowered, Options};

// ---- Harness ----------------------------------------------------------------------------------

/// The diagnostics (message and note) lowering `text` reports.
fn rejection(text: &str) -> String {
    let program = tgsi2va::tgsi::parse(text).unwrap();
    match tgsi2va::lower::lower(&program, &Options::default()) {
        Ok(l) => panic!("lowered:\n{}", print(&l.shader)),
        Err(d) => {
            d.0.iter().map(|d| format!("{}: {} ({:?})", d.code, d.message, d.notes)).collect::<Vec<_>>().join("\n")
        }
    }
}

/// A fragment shader running `lines` (numbered from 0) with `CONST[0][0..3]`, `TEMP[0..1]`
/// and the given immediates, writing `OUT[0]` (colour).
fn frag(imms: &[&str], lines: &[&str]) -> String {
    let mut t = String::from("FRAG\nDCL OUT[0], COLOR\nDCL CONST[0][0..3]\nDCL TEMP[0..1]\n");
    for (i, imm) in imms.iter().enumerate() {
        t += &format!("IMM[{i}] {imm}\n");
    }
    for (i, l) in lines.iter().chain(&["END"]).enumerate() {
        t += &format!("{i:>3}: {l}\n");
    }
    t
}

/// A lowered fragment shader that can be run.
struct Prog {
    lowered: Lowered,
    text: String,
}

impl Prog {
    fn new(imms: &[&str], lines: &[&str]) -> Prog {
        let text = frag(imms, lines);
        Prog { lowered: lower(&text), text }
    }

    fn run_with(&self, rcp: eval::Rcp, consts: &[[u32; 4]]) -> [u32; 4] {
        let run = eval::Run { shader: &self.lowered.shader, meta: &self.lowered.meta, rcp };
        run.colour(consts).unwrap_or_else(|e| panic!("{e}\n{}\n{}", self.text, print(&self.lowered.shader)))
    }

    fn run(&self, consts: &[[u32; 4]]) -> [u32; 4] {
        self.run_with(eval::Rcp::Nearest, consts)
    }

    /// Machine instructions of the shader minus those of the same shader without the tested
    /// lines' arithmetic (the fragment epilogue: ATEST and BLEND).
    fn machine_insts(&self) -> usize {
        let s = &self.lowered.shader;
        (0..s.blocks.len())
            .flat_map(|b| s.block_insts(tgsi2va::ir::Block(b as u32)).collect::<Vec<_>>())
            .filter(|&i| s.inst(i).is_machine())
            .count()
            - 2
    }
}

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// Integer draws from the shared generator.
trait IntDraws {
    /// A value with a random number of significant bits (small values are common in shaders).
    fn u32_any_width(&mut self) -> u32;
    fn u64_any_width(&mut self) -> u64;
}

impl IntDraws for Rng {
    fn u32_any_width(&mut self) -> u32 {
        let bits = self.next_u32() % 33;
        let v = self.next_u32();
        if bits == 32 { v } else { v & ((1u32 << bits) - 1) }
    }

    fn u64_any_width(&mut self) -> u64 {
        let bits = self.next() % 65;
        let v = self.next();
        if bits == 64 { v } else { v & ((1u64 << bits) - 1) }
    }
}

/// Interesting 32-bit operands.
fn edges() -> Vec<u32> {
    let mut v: Vec<u32> = vec![0, 1, 2, 3, 5, 7, 10, 100, 255, 256, 1000, 65535, 65536, 65537, 1_000_000];
    for k in [7u32, 8, 15, 16, 17, 23, 24, 25, 30, 31] {
        v.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    v.extend([0x7FFF_FFFE, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0xAAAA_AAAA, 0x5555_5555, 0xFFFF_0000]);
    v.extend([0x0000_FFFF, 0xFFFF_FFFD, 0xFFFF_FFFE, 0xFFFF_FFFF, 0xDEAD_BEEF, 0x1234_5678]);
    let negatives: Vec<u32> = v.iter().map(|x| x.wrapping_neg()).collect();
    v.extend(negatives);
    v.sort_unstable();
    v.dedup();
    v
}

/// Operand pairs: all pairs of edge values plus `n` pseudo-random ones.
fn pairs(n: usize, seed: u64) -> Vec<(u32, u32)> {
    let e = edges();
    let mut v: Vec<(u32, u32)> = e.iter().flat_map(|&a| e.iter().map(move |&b| (a, b))).collect();
    let mut rng = Rng::new(seed);
    for _ in 0..n {
        v.push((rng.u32_any_width(), rng.u32_any_width()));
    }
    v
}

// ---- Precise output ---------------------------------------------------------------------------

#[test]
fn expected_ir_int() {
    expectations("int", "int.txt");
}

#[test]
fn expected_ir_division() {
    expectations("int", "division.txt");
}

#[test]
fn expected_ir_bits() {
    expectations("int", "bits.txt");
}

#[test]
fn expected_ir_convert() {
    expectations("int", "convert.txt");
}

#[test]
fn expected_ir_int64() {
    expectations("int", "int64.txt");
}

// ---- Instruction counts -----------------------------------------------------------------------

#[test]
fn sequence_lengths() {
    let count = |line: &str| Prog::new(&["UINT32 {7, 12, 1000000, 0}"], &[line]).machine_insts();
    let table = [
        ("UADD OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx", 1),
        ("UMUL_HI OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx", 9),
        ("IMUL_HI OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx", 11),
        ("UDIV OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx", 34),
        ("UMOD OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx", 32),
        ("IDIV OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx", 39),
        ("MOD OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx", 36),
        ("UDIV OUT[0].x, CONST[0][0].xxxx, IMM[0].xxxx", 11),
        ("UDIV OUT[0].x, CONST[0][0].xxxx, IMM[0].zzzz", 10),
        ("UDIV OUT[0].x, CONST[0][0].xxxx, IMM[0].yyyy", 10),
        ("UMOD OUT[0].x, CONST[0][0].xxxx, IMM[0].xxxx", 13),
        ("ISSG OUT[0].x, CONST[0][0].xxxx", 2),
        ("UBFE OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx, CONST[0][2].xxxx", 3),
        ("IBFE OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx, CONST[0][2].xxxx", 6),
        ("BFI OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx, CONST[0][2].xxxx, CONST[0][3].xxxx", 5),
        ("LSB OUT[0].x, CONST[0][0].xxxx", 3),
        ("IMSB OUT[0].x, CONST[0][0].xxxx", 3),
        ("UMSB OUT[0].x, CONST[0][0].xxxx", 2),
        ("PK2US OUT[0].x, CONST[0][0]", 7),
        ("PK4UB OUT[0].x, CONST[0][0]", 14),
        ("U64ADD OUT[0].xy, CONST[0][0], CONST[0][1]", 4),
        ("U64MUL OUT[0].xy, CONST[0][0], CONST[0][1]", 14),
        ("U64SHL OUT[0].xy, CONST[0][0], CONST[0][1]", 8),
        ("I64SHR OUT[0].xy, CONST[0][0], CONST[0][1]", 9),
        ("U64SLT OUT[0].x, CONST[0][0], CONST[0][1]", 3),
        ("I64MIN OUT[0].xy, CONST[0][0], CONST[0][1]", 4),
        ("F2U64 OUT[0].xy, CONST[0][0]", 6),
        ("F2I64 OUT[0].xy, CONST[0][0]", 10),
        ("U642F OUT[0].x, CONST[0][0]", 11),
        ("I642F OUT[0].x, CONST[0][0]", 17),
    ];
    let mut wrong = Vec::new();
    for (line, n) in table {
        let got = count(line);
        if got != n {
            wrong.push(format!("{line}: {got} instructions, expected {n}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---- Integer arithmetic -----------------------------------------------------------------------

/// Runs a two-operand opcode on `x` of CONST[0][0] and CONST[0][1], checking `f` on `pairs`.
fn check_binary(opcode: &str, pairs: &[(u32, u32)], f: impl Fn(u32, u32) -> u32) {
    let p = Prog::new(&[], &[&format!("{opcode} OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx")]);
    for &(a, b) in pairs {
        let got = p.run(&[[a, 0, 0, 0], [b, 0, 0, 0]])[0];
        assert_eq!(got, f(a, b), "{opcode} {a:#x}, {b:#x}");
    }
}

fn check_unary(opcode: &str, values: &[u32], f: impl Fn(u32) -> u32) {
    let p = Prog::new(&[], &[&format!("{opcode} OUT[0].x, CONST[0][0].xxxx")]);
    for &a in values {
        assert_eq!(p.run(&[[a, 0, 0, 0]])[0], f(a), "{opcode} {a:#x}");
    }
}

fn udiv_ref(n: u32, d: u32) -> u32 {
    n.checked_div(d).unwrap_or(u32::MAX)
}

fn umod_ref(n: u32, d: u32) -> u32 {
    n.checked_rem(d).unwrap_or(u32::MAX)
}

fn idiv_ref(n: u32, d: u32) -> u32 {
    let (n, d) = (n as i32, d as i32);
    if d == 0 { if n < 0 { 1 } else { u32::MAX } } else { n.wrapping_div(d) as u32 }
}

fn imod_ref(n: u32, d: u32) -> u32 {
    let (n, d) = (n as i32, d as i32);
    if d == 0 { u32::MAX } else { n.wrapping_rem(d) as u32 }
}

#[test]
fn arithmetic_values() {
    let p = pairs(3000, 1);
    check_binary("UADD", &p, u32::wrapping_add);
    check_binary("UMUL", &p, u32::wrapping_mul);
    check_binary("IMIN", &p, |a, b| (a as i32).min(b as i32) as u32);
    check_binary("IMAX", &p, |a, b| (a as i32).max(b as i32) as u32);
    check_binary("UMIN", &p, u32::min);
    check_binary("UMAX", &p, u32::max);
    let mask = |c: bool| if c { u32::MAX } else { 0 };
    check_binary("ISLT", &p, |a, b| mask((a as i32) < (b as i32)));
    check_binary("ISGE", &p, |a, b| mask((a as i32) >= (b as i32)));
    check_binary("USLT", &p, |a, b| mask(a < b));
    check_binary("USGE", &p, |a, b| mask(a >= b));
    check_binary("USEQ", &p, |a, b| mask(a == b));
    check_binary("USNE", &p, |a, b| mask(a != b));
    let e = edges();
    check_unary("INEG", &e, u32::wrapping_neg);
    check_unary("IABS", &e, |a| (a as i32).unsigned_abs());
    check_unary("ISSG", &e, |a| (a as i32).signum() as u32);
}

#[test]
fn multiply_high_values() {
    let p = pairs(20000, 2);
    check_binary("UMUL_HI", &p, |a, b| ((u64::from(a) * u64::from(b)) >> 32) as u32);
    check_binary("IMUL_HI", &p, |a, b| ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32);
}

#[test]
fn umad_sad_ucmp_and_modifiers() {
    let p = Prog::new(
        &[],
        &[
            "UMAD OUT[0].x, CONST[0][0].xxxx, CONST[0][0].yyyy, CONST[0][0].zzzz",
            "SAD OUT[0].y, CONST[0][0].xxxx, CONST[0][0].yyyy, CONST[0][0].zzzz",
            "UCMP OUT[0].z, CONST[0][0].wwww, CONST[0][0].xxxx, CONST[0][0].yyyy",
            // Integer source modifiers: -x is two's complement negation, |x| the absolute value.
            "UADD OUT[0].w, -CONST[0][0].xxxx, |CONST[0][0].yyyy|",
        ],
    );
    let mut rng = Rng::new(3);
    for _ in 0..2000 {
        let (a, b, c, w) = (rng.u32_any_width(), rng.u32_any_width(), rng.u32_any_width(), rng.next_u32() % 3);
        let out = p.run(&[[a, b, c, w]]);
        assert_eq!(out[0], a.wrapping_mul(b).wrapping_add(c));
        assert_eq!(out[1], (a.max(b) - a.min(b)).wrapping_add(c), "SAD {a} {b} {c}");
        assert_eq!(out[2], if w != 0 { a } else { b });
        assert_eq!(out[3], a.wrapping_neg().wrapping_add((b as i32).unsigned_abs()));
    }
}

#[test]
fn division_by_variables_is_exact() {
    let mut p = pairs(30000, 4);
    // Divisors near powers of two and large quotients stress the reciprocal's last bits.
    let mut rng = Rng::new(5);
    for _ in 0..20000 {
        let k = rng.next_u32() % 32;
        let d = (1u32 << k).wrapping_add(rng.next_u32() % 3).wrapping_sub(1).max(1);
        p.push((rng.next_u32(), d));
        p.push((u32::MAX - rng.next_u32() % 1000, rng.next_u32() >> (rng.next_u32() % 32)));
    }
    check_binary("UDIV", &p, udiv_ref);
    check_binary("UMOD", &p, umod_ref);
    check_binary("IDIV", &p, idiv_ref);
    check_binary("MOD", &p, imod_ref);
}

#[test]
fn division_by_every_16_bit_divisor() {
    // For each d < 2^16 the numerators with the largest quotients and remainders.
    let p: Vec<(u32, u32)> = (1..=0x1_0000u32)
        .flat_map(|d| {
            let top = u32::MAX / d * d;
            [(u32::MAX, d), (top.wrapping_sub(1), d), (top.wrapping_sub(d), d)]
        })
        .collect();
    check_binary("UDIV", &p, udiv_ref);
    check_binary("UMOD", &p, umod_ref);
}

#[test]
fn division_tolerates_an_inexact_reciprocal() {
    // Any faithful FRCP (either neighbour of the exact reciprocal), or one up to 64 ulps below
    // it, still gives exact results: the scale 2^32 − 512 keeps the estimate below 2^32/d and
    // the Newton step and two corrections absorb the rest. (An FRCP above the upper neighbour
    // can push the estimate past 2^32/d, e.g. for d = 3; so does Mesa's sequence.)
    let udiv = Prog::new(&[], &["UDIV OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx"]);
    let umod = Prog::new(&[], &["UMOD OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx"]);
    let mut p = pairs(3000, 6);
    p.extend((1..5000).map(|d| (u32::MAX, d)));
    for below in [-1, 0, 1, 8, 64] {
        let rcp = eval::Rcp::TowardZeroMinus(below);
        for &(n, d) in &p {
            let c = [[n, 0, 0, 0], [d, 0, 0, 0]];
            assert_eq!(udiv.run_with(rcp, &c)[0], udiv_ref(n, d), "{n} / {d}, {rcp:?}");
            assert_eq!(umod.run_with(rcp, &c)[0], umod_ref(n, d), "{n} % {d}, {rcp:?}");
        }
    }
}

#[test]
fn division_by_constants_is_exact() {
    let mut divisors: Vec<u32> = (0..=300).collect();
    divisors.extend([641, 1000, 6700417, 1_000_000, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0xFFFF_FFFE, 0xFFFF_FFFF]);
    divisors.extend([7 << 20, 3 << 29, 0x0FFF_FFFF, 0x5555_5555, 0xAAAA_AAAB, (1 << 31) - 3]);
    let mut numerators = edges();
    let mut rng = Rng::new(7);
    numerators.extend((0..300).map(|_| rng.u32_any_width()));
    for d in divisors {
        let imm = format!("UINT32 {{{d}, 0, 0, 0}}");
        let p = Prog::new(
            &[&imm],
            &[
                "UDIV OUT[0].x, CONST[0][0].xxxx, IMM[0].xxxx",
                "UMOD OUT[0].y, CONST[0][0].xxxx, IMM[0].xxxx",
                "IDIV OUT[0].z, CONST[0][0].xxxx, IMM[0].xxxx",
                "MOD OUT[0].w, CONST[0][0].xxxx, IMM[0].xxxx",
            ],
        );
        for &n in numerators.iter().chain(&[d, d.wrapping_add(1), d.wrapping_sub(1), d.wrapping_mul(3)]) {
            let out = p.run(&[[n, 0, 0, 0]]);
            let want = [udiv_ref(n, d), umod_ref(n, d), idiv_ref(n, d), imod_ref(n, d)];
            assert_eq!(out, want, "n = {n:#x}, d = {d:#x} (UDIV, UMOD, IDIV, MOD)\n{}", print(&p.lowered.shader));
        }
    }
}

// ---- Bitwise ----------------------------------------------------------------------------------

#[test]
fn bitwise_and_shift_values() {
    let p = pairs(2000, 8);
    check_binary("AND", &p, |a, b| a & b);
    check_binary("OR", &p, |a, b| a | b);
    check_binary("XOR", &p, |a, b| a ^ b);
    check_unary("NOT", &edges(), |a| !a);
    let mut counts: Vec<(u32, u32)> = Vec::new();
    for &a in &edges() {
        for s in (0..70).chain([u32::MAX, u32::MAX - 31, 255, 256, 257]) {
            counts.push((a, s));
        }
    }
    check_binary("SHL", &counts, |a, s| a << (s & 31));
    check_binary("USHR", &counts, |a, s| a >> (s & 31));
    check_binary("ISHR", &counts, |a, s| ((a as i32) >> (s & 31)) as u32);
    // Legacy SHR is arithmetic.
    let shr = Prog::new(&[], &["SHR OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx"]);
    for &(a, s) in &counts {
        assert_eq!(shr.run(&[[a, 0, 0, 0], [s, 0, 0, 0]])[0], ((a as i32) >> (s & 31)) as u32);
    }
}

/// The documented bitfield semantics (module doc of src/lower/bits.rs).
fn mask(w: u32) -> u32 {
    if w >= 32 { u32::MAX } else { (1u32 << w) - 1 }
}

fn ubfe_ref(v: u32, off: u32, bits: u32) -> u32 {
    (v >> (off & 31)) & mask(bits)
}

fn ibfe_ref(v: u32, off: u32, bits: u32) -> u32 {
    let x = ((v as i32) >> (off & 31)) as u32;
    match bits {
        0 => 0,
        w if w >= 32 => x,
        w => (((x << (32 - w)) as i32) >> (32 - w)) as u32,
    }
}

fn bfi_ref(base: u32, ins: u32, off: u32, bits: u32) -> u32 {
    let m = mask(bits) << (off & 31);
    (base & !m) | ((ins << (off & 31)) & m)
}

/// tgsi.rst's pseudocode, for `offset + bits ≤ 32`.
fn tgsi_rst_bitfields(v: u32, ins: u32, off: u32, bits: u32) -> (u32, u32, u32) {
    assert!(off + bits <= 32);
    let (ubfe, ibfe) = if bits == 0 {
        (0, 0)
    } else {
        let l = 32 - off - bits;
        ((v << l) >> (32 - bits), (((v << l) as i32) >> (32 - bits)) as u32)
    };
    let m = if bits == 32 { u32::MAX } else { ((1u32 << bits) - 1).checked_shl(off).unwrap_or(0) };
    let bfi = ((ins.checked_shl(off).unwrap_or(0)) & m) | (v & !m);
    (ubfe, ibfe, bfi)
}

#[test]
fn bitfield_semantics_follow_tgsi_rst_in_range() {
    for off in 0..=32 {
        for bits in 0..=32 - off {
            for v in [0u32, 0xFFFF_FFFF, 0x8000_0001, 0x1234_5678, 0xDEAD_BEEF] {
                let ins = v.rotate_left(13) ^ 0x5A5A_5A5A;
                let want = tgsi_rst_bitfields(v, ins, off, bits);
                assert_eq!((ubfe_ref(v, off, bits), ibfe_ref(v, off, bits), bfi_ref(v, ins, off, bits)), want);
            }
        }
    }
}

#[test]
fn bitfield_values() {
    let var = Prog::new(
        &[],
        &[
            "UBFE OUT[0].x, CONST[0][0].xxxx, CONST[0][0].yyyy, CONST[0][0].zzzz",
            "IBFE OUT[0].y, CONST[0][0].xxxx, CONST[0][0].yyyy, CONST[0][0].zzzz",
            "BFI OUT[0].z, CONST[0][0].xxxx, CONST[0][0].wwww, CONST[0][0].yyyy, CONST[0][0].zzzz",
        ],
    );
    let offsets_bits: Vec<u32> = (0..=40).chain([63, 64, 65, 255, 256, 0x8000_0000, u32::MAX]).collect();
    let values = [0u32, 0xFFFF_FFFF, 0x8000_0001, 0x1234_5678, 0xDEAD_BEEF, 0x7FFF_FFFE];
    for &off in &offsets_bits {
        for &bits in &offsets_bits {
            for &v in &values {
                let ins = v.rotate_left(7) ^ 0x0F0F_0F0F;
                let out = var.run(&[[v, off, bits, ins]]);
                let want = [ubfe_ref(v, off, bits), ibfe_ref(v, off, bits), bfi_ref(v, ins, off, bits)];
                assert_eq!(&out[..3], &want, "v {v:#x} offset {off} bits {bits} ins {ins:#x}");
            }
        }
    }
    // Constant offsets and widths (folded masks and shift amounts).
    for off in [0u32, 1, 8, 31, 32, 33] {
        for bits in [0u32, 1, 5, 16, 31, 32, 33, 100] {
            let imm = format!("UINT32 {{{off}, {bits}, 0, 0}}");
            let p = Prog::new(
                &[&imm],
                &[
                    "UBFE OUT[0].x, CONST[0][0].xxxx, IMM[0].xxxx, IMM[0].yyyy",
                    "IBFE OUT[0].y, CONST[0][0].xxxx, IMM[0].xxxx, IMM[0].yyyy",
                    "BFI OUT[0].z, CONST[0][0].xxxx, CONST[0][0].wwww, IMM[0].xxxx, IMM[0].yyyy",
                    "BFI OUT[0].w, CONST[0][0].xxxx, CONST[0][0].wwww, CONST[0][0].yyyy, IMM[0].yyyy",
                ],
            );
            for &v in &values {
                let ins = v.rotate_left(7) ^ 0x0F0F_0F0F;
                let out = p.run(&[[v, off, 0, ins]]);
                let want = [
                    ubfe_ref(v, off, bits),
                    ibfe_ref(v, off, bits),
                    bfi_ref(v, ins, off, bits),
                    bfi_ref(v, ins, off, bits),
                ];
                assert_eq!(out, want, "v {v:#x} offset {off} bits {bits} (constant)");
            }
        }
    }
}

#[test]
fn bit_counting_values() {
    let mut values = edges();
    let mut rng = Rng::new(9);
    values.extend((0..2000).map(|_| rng.u32_any_width()));
    let msb = |x: u32| if x == 0 { u32::MAX } else { 31 - x.leading_zeros() };
    check_unary("BREV", &values, u32::reverse_bits);
    check_unary("POPC", &values, u32::count_ones);
    check_unary("LSB", &values, |a| if a == 0 { u32::MAX } else { a.trailing_zeros() });
    check_unary("UMSB", &values, msb);
    check_unary("IMSB", &values, |a| msb(if (a as i32) < 0 { !a } else { a }));
}

// ---- Conversions ------------------------------------------------------------------------------

/// Interesting floats: zeros, integers around the conversion limits, fractions, NaN, ∞.
fn float_edges() -> Vec<f32> {
    let mut v = vec![0.0f32, -0.0, 0.5, -0.5, 0.99999994, 1.0, -1.0, 1.5, -1.5, 2.5, -2.5, 127.5, 255.49998, 65535.5];
    v.extend([f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, f32::MIN_POSITIVE, 1e-45]);
    for k in [23, 24, 31, 32, 33, 52, 53, 62, 63, 64, 65, 100] {
        let p = 2f32.powi(k);
        for x in [p, f32::from_bits(p.to_bits() - 1), f32::from_bits(p.to_bits() + 1)] {
            v.extend([x, -x]);
        }
    }
    v
}

#[test]
fn int_float_conversion_values() {
    let mut floats = float_edges();
    let mut rng = Rng::new(10);
    floats.extend((0..3000).map(|_| f32::from_bits(rng.next_u32())));
    let bits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
    check_unary("F2I", &bits, |x| f32::from_bits(x) as i32 as u32);
    check_unary("F2U", &bits, |x| f32::from_bits(x) as u32);
    let mut ints = edges();
    ints.extend((0..3000).map(|_| rng.u32_any_width()));
    check_unary("I2F", &ints, |x| (x as i32 as f32).to_bits());
    check_unary("U2F", &ints, |x| (x as f32).to_bits());
    // A float source keeps its modifiers on the conversion.
    check_unary("F2I", &bits, |x| f32::from_bits(x) as i32 as u32);
    let p = Prog::new(&[], &["F2I OUT[0].x, -|CONST[0][0].xxxx|"]);
    for &x in &floats {
        assert_eq!(p.run(&[[x.to_bits(), 0, 0, 0]])[0], (-x.abs()) as i32 as u32, "F2I -|{x}|");
    }
}

fn unorm(x: f32, m: f32) -> u32 {
    let c = if x.is_nan() || x <= 0.0 { 0.0 } else { x.min(1.0) };
    (c * m).round_ties_even() as u32
}

fn snorm8(x: f32) -> u32 {
    let c = if x.is_nan() { 0.0 } else { x.clamp(-1.0, 1.0) };
    ((c * 127.0).round_ties_even() as i32 as u32) & 0xFF
}

#[test]
fn pack_values() {
    let p = Prog::new(
        &[],
        &[
            "PK2H OUT[0].x, CONST[0][0].xyxx",
            "PK2US OUT[0].y, CONST[0][0].xyxx",
            "PK4B OUT[0].z, CONST[0][0]",
            "PK4UB OUT[0].w, CONST[0][0]",
        ],
    );
    let mut floats = float_edges();
    let mut rng = Rng::new(11);
    floats.extend((0..2000).map(|_| (rng.next_u32() as f32 / u32::MAX as f32) * 2.4 - 1.2));
    floats.extend((0..256).map(|i| i as f32 / 255.0));
    floats.extend((0..256).map(|i| (i as f32 - 128.0) / 127.0));
    for w in floats.windows(4) {
        let x: Vec<u32> = w.iter().map(|f| f.to_bits()).collect();
        let out = p.run(&[[x[0], x[1], x[2], x[3]]]);
        let h = |f: f32| u32::from(half::f16::from_f32(f).to_bits());
        assert_eq!(out[0], h(w[0]) | h(w[1]) << 16, "PK2H {w:?}");
        assert_eq!(out[1], unorm(w[0], 65535.0) | unorm(w[1], 65535.0) << 16, "PK2US {w:?}");
        let bytes = |g: &dyn Fn(f32) -> u32| (0..4).fold(0u32, |acc, i| acc | g(w[i]) << (8 * i));
        assert_eq!(out[2], bytes(&snorm8), "PK4B {w:?}");
        assert_eq!(out[3], bytes(&|f| unorm(f, 255.0)), "PK4UB {w:?}");
    }
}

#[test]
fn unpack_values() {
    let up2h = Prog::new(&[], &["UP2H OUT[0], CONST[0][0].xxxx"]);
    let up2us = Prog::new(&[], &["UP2US OUT[0], CONST[0][0].xxxx"]);
    let up4b = Prog::new(&[], &["UP4B OUT[0], CONST[0][0].xxxx"]);
    let up4ub = Prog::new(&[], &["UP4UB OUT[0], CONST[0][0].xxxx"]);
    let mut values = edges();
    let mut rng = Rng::new(12);
    values.extend((0..3000).map(|_| rng.next_u32()));
    values.extend([0x7C00_FC00, 0x7E00_0001, 0x8000_0400, 0x8080_7F81]);
    for v in values {
        let c = [[v, 0, 0, 0]];
        let f16 = |h: u32| half::f16::from_bits(h as u16).to_f32().to_bits();
        let want = [f16(v & 0xFFFF), f16(v >> 16), f16(v & 0xFFFF), f16(v >> 16)];
        let got = up2h.run(&c);
        for i in 0..4 {
            // NaN payloads: any NaN matches any NaN.
            let same = got[i] == want[i] || (f32::from_bits(got[i]).is_nan() && f32::from_bits(want[i]).is_nan());
            assert!(same, "UP2H {v:#x}: {got:x?} vs {want:x?}");
        }
        let us = |h: u32| (h as f32 * (1.0f32 / 65535.0)).to_bits();
        assert_eq!(up2us.run(&c), [us(v & 0xFFFF), us(v >> 16), us(v & 0xFFFF), us(v >> 16)], "UP2US {v:#x}");
        let byte = |i: u32| (v >> (8 * i)) & 0xFF;
        let ub = |i: u32| (byte(i) as f32 * (1.0f32 / 255.0)).to_bits();
        assert_eq!(up4ub.run(&c), [ub(0), ub(1), ub(2), ub(3)], "UP4UB {v:#x}");
        let sb = |i: u32| (byte(i) as u8 as i8 as f32 * (1.0f32 / 127.0)).clamp(-1.0, 1.0).to_bits();
        assert_eq!(up4b.run(&c), [sb(0), sb(1), sb(2), sb(3)], "UP4B {v:#x}");
    }
    // Packing inverts unpacking: every byte and unorm16 code comes back (snorm −128 as −127,
    // since it unpacks to −1.0).
    let round_trip = Prog::new(
        &[],
        &[
            "UP4UB TEMP[0], CONST[0][0].xxxx",
            "PK4UB OUT[0].x, TEMP[0]",
            "UP4B TEMP[1], CONST[0][0].xxxx",
            "PK4B OUT[0].y, TEMP[1]",
            "UP2US TEMP[0], CONST[0][0].xxxx",
            "PK2US OUT[0].z, TEMP[0]",
        ],
    );
    for i in 0..=0xFFFFu32 {
        let v = i | (i ^ 0xA5C3) << 16;
        let out = round_trip.run(&[[v, 0, 0, 0]]);
        let snorm = (0..4).fold(0, |acc, k| {
            let b = (v >> (8 * k)) & 0xFF;
            acc | (if b == 0x80 { 0x81 } else { b }) << (8 * k)
        });
        assert_eq!(out[..3], [v, snorm, v], "{v:#x}");
    }
}

// ---- 64-bit integers --------------------------------------------------------------------------

fn split(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

fn join(w: [u32; 4]) -> u64 {
    u64::from(w[0]) | u64::from(w[1]) << 32
}

fn edges64() -> Vec<u64> {
    let mut v =
        vec![0u64, 1, 2, 0xFFFF_FFFF, 0x1_0000_0000, 0x1_0000_0001, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000];
    v.extend([0x8000_0000, 0xFFFF_FFFF_0000_0000, 0x0000_0001_FFFF_FFFF, 5_000_000_000, 0xDEAD_BEEF_0123_4567]);
    let neg: Vec<u64> = v.iter().map(|x| x.wrapping_neg()).collect();
    v.extend(neg);
    v
}

fn pairs64(n: usize, seed: u64) -> Vec<(u64, u64)> {
    let e = edges64();
    let mut v: Vec<(u64, u64)> = e.iter().flat_map(|&a| e.iter().map(move |&b| (a, b))).collect();
    let mut rng = Rng::new(seed);
    for _ in 0..n {
        v.push((rng.u64_any_width(), rng.u64_any_width()));
    }
    v
}

/// A 64-bit opcode on CONST[0][0].xy and CONST[0][1].xy, checking OUT[0].xy.
fn check64(opcode: &str, f: impl Fn(u64, u64) -> u64) {
    let p = Prog::new(&[], &[&format!("{opcode} OUT[0].xy, CONST[0][0].xyxy, CONST[0][1].xyxy")]);
    for (a, b) in pairs64(3000, 13) {
        let (a2, b2) = (split(a), split(b));
        let out = p.run(&[[a2[0], a2[1], 0, 0], [b2[0], b2[1], 0, 0]]);
        assert_eq!(join(out), f(a, b), "{opcode} {a:#x}, {b:#x}");
    }
}

fn check64_narrow(opcode: &str, f: impl Fn(u64, u64) -> bool) {
    let p = Prog::new(&[], &[&format!("{opcode} OUT[0].x, CONST[0][0].xyxy, CONST[0][1].xyxy")]);
    for (a, b) in pairs64(3000, 14) {
        let (a2, b2) = (split(a), split(b));
        let out = p.run(&[[a2[0], a2[1], 0, 0], [b2[0], b2[1], 0, 0]]);
        assert_eq!(out[0], if f(a, b) { u32::MAX } else { 0 }, "{opcode} {a:#x}, {b:#x}");
    }
}

#[test]
fn int64_arithmetic_values() {
    check64("U64ADD", u64::wrapping_add);
    check64("U64MUL", u64::wrapping_mul);
    check64("U64MIN", u64::min);
    check64("U64MAX", u64::max);
    check64("I64MIN", |a, b| (a as i64).min(b as i64) as u64);
    check64("I64MAX", |a, b| (a as i64).max(b as i64) as u64);
    check64_narrow("U64SEQ", |a, b| a == b);
    check64_narrow("U64SNE", |a, b| a != b);
    check64_narrow("U64SLT", |a, b| a < b);
    check64_narrow("U64SGE", |a, b| a >= b);
    check64_narrow("I64SLT", |a, b| (a as i64) < (b as i64));
    check64_narrow("I64SGE", |a, b| (a as i64) >= (b as i64));
    let unary = Prog::new(
        &[],
        &[
            "I64ABS OUT[0].xy, CONST[0][0].xyxy",
            "I64NEG OUT[0].zw, CONST[0][0].xyxy",
            "I64SSG TEMP[0].xy, CONST[0][0].xyxy",
            "U64ADD TEMP[0].zw, -CONST[0][0].xyxy, |CONST[0][1].xyxy|",
        ],
    );
    let ssg = Prog::new(
        &[],
        &["I64SSG OUT[0].xy, CONST[0][0].xyxy", "U64ADD OUT[0].zw, -CONST[0][0].xyxy, |CONST[0][1].xyxy|"],
    );
    for (a, b) in pairs64(3000, 15) {
        let (a2, b2) = (split(a), split(b));
        let c = [[a2[0], a2[1], 0, 0], [b2[0], b2[1], 0, 0]];
        let out = unary.run(&c);
        assert_eq!(join(out), (a as i64).unsigned_abs(), "I64ABS {a:#x}");
        assert_eq!(join([out[2], out[3], 0, 0]), a.wrapping_neg(), "I64NEG {a:#x}");
        let out = ssg.run(&c);
        assert_eq!(join(out), (a as i64).signum() as u64, "I64SSG {a:#x}");
        assert_eq!(join([out[2], out[3], 0, 0]), a.wrapping_neg().wrapping_add((b as i64).unsigned_abs()), "-a + |b|");
    }
}

#[test]
fn int64_shift_values() {
    let var = Prog::new(
        &[],
        &[
            "U64SHL OUT[0].xy, CONST[0][0].xyxy, CONST[0][1].xxxx",
            "U64SHR OUT[0].zw, CONST[0][0].xyxy, CONST[0][1].xxxx",
        ],
    );
    let ishr = Prog::new(&[], &["I64SHR OUT[0].xy, CONST[0][0].xyxy, CONST[0][1].xxxx"]);
    let mut values = edges64();
    let mut rng = Rng::new(16);
    values.extend((0..200).map(|_| rng.next()));
    let counts: Vec<u32> = (0..=130).chain([255, 256, u32::MAX]).collect();
    for &a in &values {
        for &s in &counts {
            let a2 = split(a);
            let c = [[a2[0], a2[1], 0, 0], [s, 0, 0, 0]];
            let out = var.run(&c);
            assert_eq!(join(out), a << (s & 63), "U64SHL {a:#x} {s}");
            assert_eq!(join([out[2], out[3], 0, 0]), a >> (s & 63), "U64SHR {a:#x} {s}");
            assert_eq!(join(ishr.run(&c)), ((a as i64) >> (s & 63)) as u64, "I64SHR {a:#x} {s}");
        }
    }
    // Constant counts.
    for s in [0u32, 1, 5, 31, 32, 33, 47, 63, 64, 65, 100] {
        let imm = format!("UINT32 {{{s}, 0, 0, 0}}");
        let p = Prog::new(
            &[&imm],
            &[
                "U64SHL OUT[0].xy, CONST[0][0].xyxy, IMM[0].xxxx",
                "U64SHR OUT[0].zw, CONST[0][0].xyxy, IMM[0].xxxx",
                "I64SHR TEMP[0].xy, CONST[0][0].xyxy, IMM[0].xxxx",
            ],
        );
        let q = Prog::new(&[&imm], &["I64SHR OUT[0].xy, CONST[0][0].xyxy, IMM[0].xxxx"]);
        for &a in &values {
            let a2 = split(a);
            let out = p.run(&[[a2[0], a2[1], 0, 0]]);
            assert_eq!(join(out), a << (s & 63), "U64SHL {a:#x} #{s}");
            assert_eq!(join([out[2], out[3], 0, 0]), a >> (s & 63), "U64SHR {a:#x} #{s}");
            assert_eq!(join(q.run(&[[a2[0], a2[1], 0, 0]])), ((a as i64) >> (s & 63)) as u64, "I64SHR {a:#x} #{s}");
        }
    }
}

#[test]
fn int64_conversion_values() {
    let widen = Prog::new(&[], &["U2I64 OUT[0].xy, CONST[0][0].xyxx", "I2I64 OUT[0].zw, CONST[0][0].xyxx"]);
    for &v in &edges() {
        let out = widen.run(&[[v, v.wrapping_add(1), 0, 0]]);
        assert_eq!(join(out), u64::from(v));
        assert_eq!(join([out[2], out[3], 0, 0]), i64::from(v.wrapping_add(1) as i32) as u64, "I2I64 uses channel y");
    }
    let f2 = Prog::new(&[], &["F2U64 OUT[0].xy, CONST[0][0].xxxx", "F2I64 OUT[0].zw, CONST[0][0].xxxx"]);
    let mut floats = float_edges();
    let mut rng = Rng::new(17);
    floats.extend((0..5000).map(|_| f32::from_bits(rng.next_u32() & 0xDFFF_FFFF)));
    floats.extend((0..3000).map(|_| (rng.next() as i64 >> (rng.next_u32() % 64)) as f32));
    for &x in &floats {
        let out = f2.run(&[[x.to_bits(), 0, 0, 0]]);
        assert_eq!(join(out), x as u64, "F2U64 {x:e}");
        assert_eq!(join([out[2], out[3], 0, 0]), x as i64 as u64, "F2I64 {x:e} ({:#x})", x.to_bits());
    }
    let to_f = Prog::new(&[], &["U642F OUT[0].x, CONST[0][0].xyxy", "I642F OUT[0].y, CONST[0][0].xyxy"]);
    let mut values = edges64();
    values.extend((0..20000).map(|_| rng.u64_any_width()));
    // Halfway cases and sticky bits below the top 32 bits.
    for k in 24..64 {
        values.extend([
            (1u64 << k) | (1 << (k - 24)),
            (1u64 << k) | (1 << (k - 24)) | 1,
            (1u64 << k) | (3 << (k - 24)),
        ]);
    }
    for &v in &values {
        let w = split(v);
        let out = to_f.run(&[[w[0], w[1], 0, 0]]);
        assert_eq!(out[0], (v as f32).to_bits(), "U642F {v:#x}");
        assert_eq!(out[1], (v as i64 as f32).to_bits(), "I642F {v:#x}");
    }
}

#[test]
fn int64_pairs_and_write_masks() {
    // zw pairs read channels z, w of the swizzle; 32-bit results go to the enabled channels in
    // order; 32-bit operands of pair 1 come from channel y.
    let p = Prog::new(
        &[],
        &[
            "U64ADD OUT[0].zw, CONST[0][0].zwxy, CONST[0][1].xyxy",
            "U64SLT OUT[0].xy, CONST[0][0].xyzw, CONST[0][1].xyzw",
        ],
    );
    let out = p.run(&[[1, 0, 5, 0], [2, 0, 1, 0]]);
    assert_eq!(out, [u32::MAX, 0, 3, 0]);
    let q = Prog::new(&[], &["U2I64 OUT[0], CONST[0][0].xyzw", "U64SEQ TEMP[0].xz, CONST[0][0], CONST[0][0]"]);
    assert_eq!(q.run(&[[7, 9, 0, 0]]), [7, 0, 9, 0]);
    let r = Prog::new(&[], &["U64SEQ OUT[0].xz, CONST[0][0], CONST[0][1]"]);
    assert_eq!(r.run(&[[1, 2, 3, 4], [1, 2, 3, 5]]), [u32::MAX, 0, 0, 0]);
    let s = Prog::new(&[], &["I642F OUT[0].yw, CONST[0][0]"]);
    assert_eq!(s.run(&[[3, 0, 5, 0]]), [0, 3.0f32.to_bits(), 0, 5.0f32.to_bits()]);
}

// ---- Rejections -------------------------------------------------------------------------------

#[test]
fn rejected_opcodes_say_why() {
    let msg = rejection("VERT\nDCL IN[0]\nDCL ADDR[0]\n  0: ARA ADDR[0], IN[0]\n  1: END\n");
    assert!(msg.contains("ARA") && msg.contains("never defined"), "{msg}");
    // Double-precision opcodes are rejected with the reason (no binary64 on Valhall).
    let msg = rejection(&frag(&[], &["DADD OUT[0].xy, CONST[0][0], CONST[0][1]"]));
    assert!(msg.contains("DADD") && msg.contains("double precision: Valhall has no binary64 arithmetic"), "{msg}");
}
