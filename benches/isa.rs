//! Throughput of encode, decode, assemble and disassemble over the encoding vectors (Mesa's and
//! ours), repeated. Run with `cargo bench --bench isa`; prints instructions per second.

use std::hint::black_box;
use std::time::{Duration, Instant};
use tgsi2va::valhall::{asm, decode, decode_permissive, disasm, encode};

fn vectors() -> Vec<(u64, String)> {
    let mut out = Vec::new();
    for file in [include_str!("../tests/isa/assembler-cases.txt"), include_str!("../tests/isa/own-cases.txt")] {
        for line in file.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let Some((hex, text)) = line.split_once("    ") else { continue };
            let mut bytes = [0u8; 8];
            for (b, h) in bytes.iter_mut().zip(hex.split(' ')) {
                *b = u8::from_str_radix(h, 16).unwrap_or(0);
            }
            out.push((u64::from_le_bytes(bytes), text.to_string()));
        }
    }
    out
}

/// Runs `f` over all items repeatedly for about `budget`, returns items per second.
fn measure(name: &str, items: usize, budget: Duration, mut f: impl FnMut() -> usize) {
    let _ = f(); // warm up
    let start = Instant::now();
    let mut done = 0usize;
    let mut rounds = 0usize;
    while start.elapsed() < budget {
        done += f();
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{name:<12} {:>12.0} instructions/s   ({rounds} rounds of {items})", done as f64 / secs);
}

fn main() {
    let vectors = vectors();
    let words: Vec<u64> = vectors.iter().map(|v| v.0).collect();
    let valid: Vec<_> = words.iter().filter_map(|&w| decode(w).ok()).collect();
    let assemblable: Vec<&str> =
        vectors.iter().filter(|v| asm::assemble_line(&v.1).is_ok()).map(|v| v.1.as_str()).collect();
    let budget = Duration::from_millis(std::env::var("BENCH_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000));
    println!("{} vectors ({} strictly valid, {} assemblable)", vectors.len(), valid.len(), assemblable.len());
    measure("encode", valid.len(), budget, || valid.iter().filter(|i| black_box(encode(black_box(i))).is_ok()).count());
    measure("decode", words.len(), budget, || {
        words.iter().filter(|&&w| black_box(decode(black_box(w))).is_ok()).count()
    });
    measure("decode-perm", words.len(), budget, || {
        words.iter().filter(|&&w| black_box(decode_permissive(black_box(w))).is_ok()).count()
    });
    measure("assemble", assemblable.len(), budget, || {
        assemblable.iter().filter(|t| black_box(asm::assemble_line(black_box(t))).is_ok()).count()
    });
    measure("disassemble", words.len(), budget, || {
        words.iter().filter(|&&w| black_box(disasm::disassemble_word(black_box(w))).is_ok()).count()
    });
}
