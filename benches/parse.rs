//! Parse throughput in MB/s: over every fixture and sample, and over a large synthetic shader
//! written the way Mesa prints (run with `cargo bench --bench parse`).
//!
//! Environment: `TGSI_BENCH_DIR=DIR` reads the shaders from DIR instead of `tgsi-samples/`;
//! `TGSI_BENCH_SAMPLES_ONLY=1` stops after the sample lines; `TGSI_BENCH_ROUNDS=N` runs a fixed
//! number of rounds (for a profiler); `TGSI_BENCH_LINE=TEXT` measures one statement repeated.

#[path = "common/mod.rs"]
mod common;
use common::{collect_tgsi, thread_cpu};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tgsi2va::tgsi;

/// A fragment shader in Mesa's dump format with a realistic mix of statements.
fn synthetic(instructions: usize) -> String {
    let mut s = String::from("FRAG\nPROPERTY FS_COLOR0_WRITES_ALL_CBUFS 1\n");
    s.push_str("DCL IN[0], POSITION, LINEAR\nDCL IN[1], GENERIC[0], PERSPECTIVE\nDCL IN[2], GENERIC[1], PERSPECTIVE\n");
    s.push_str("DCL OUT[0], COLOR\nDCL SAMP[0]\nDCL SAMP[1]\nDCL SVIEW[0], 2D, FLOAT\nDCL SVIEW[1], 2D, FLOAT\n");
    s.push_str("DCL CONST[0][0..63]\nDCL TEMP[0..15], LOCAL\nDCL ADDR[0]\n");
    s.push_str("IMM[0] FLT32 {    0.5000,     1.0000,     0.0000,     2.0000}\n");
    s.push_str("IMM[1] FLT32 {    0.2126,     0.7152,     0.0722,    -1.0000}\n");
    for i in 0..instructions {
        let t = i % 16;
        let u = (i * 7 + 3) % 16;
        let line = match i % 12 {
            0 => format!("{i:3}: MOV TEMP[{t}].xy, IN[1].xyyy\n"),
            1 => format!("{i:3}: TEX TEMP[{t}], TEMP[{u}], SAMP[0], 2D\n"),
            2 => format!("{i:3}: MUL TEMP[{t}].xyz, TEMP[{u}].xyzz, CONST[0][{}].xxxx\n", i % 64),
            3 => format!("{i:3}: MAD TEMP[{t}], TEMP[{u}], IMM[0].xxxx, -TEMP[{t}].wwww\n"),
            4 => format!("{i:3}: DP3 TEMP[{t}].x, TEMP[{u}].xyzz, IMM[1].xyzz\n"),
            5 => format!("{i:3}: ADD_SAT TEMP[{t}].w, |TEMP[{u}].xxxx|, IMM[0].yyyy\n"),
            6 => format!("{i:3}: FSLT TEMP[{t}].x, TEMP[{u}].wwww, IMM[0].zzzz\n"),
            7 => format!("{i:3}: UIF TEMP[{t}].xxxx\n"),
            8 => format!("{i:3}:   LRP TEMP[{t}].xyz, TEMP[{u}].wwww, TEMP[{t}].xyzz, IN[2].xyzz\n"),
            9 => format!("{i:3}: ENDIF\n"),
            10 => format!("{i:3}: MOV TEMP[{t}], CONST[0][ADDR[0].x+{}]\n", i % 32),
            _ => format!("{i:3}: MAX TEMP[{t}].xy, TEMP[{u}].xyyy, IMM[0].zzzz\n"),
        };
        s.push_str(&line);
    }
    s.push_str(&format!("{instructions:3}: MOV OUT[0], TEMP[0]\n{:3}: END\n", instructions + 1));
    s
}

/// Parses `texts` repeatedly for about `budget`; returns MB/s (10^6 bytes per second of CPU
/// time of this thread, or of wall time where that is not available).
fn throughput(texts: &[String], budget: Duration) -> (f64, usize) {
    throughput_of(texts, budget, |t| {
        black_box(tgsi::parse(black_box(t)).ok());
    })
}

/// Parses and checks `texts` (what Mesa's `tgsi_text_translate` does: it ends with its
/// sanity check); MB/s as [`throughput`].
fn throughput_with_check(texts: &[String], budget: Duration) -> (f64, usize) {
    throughput_of(texts, budget, |t| {
        if let Ok(program) = tgsi::parse(black_box(t)) {
            black_box(tgsi::check(&program));
        }
    })
}

fn throughput_of(texts: &[String], budget: Duration, run: impl Fn(&str)) -> (f64, usize) {
    let bytes: usize = texts.iter().map(String::len).sum();
    for t in texts {
        tgsi::parse(t).expect("benchmark input parses");
    }
    let start = Instant::now();
    let cpu_start = thread_cpu();
    let mut rounds = 0;
    let fixed: Option<usize> = std::env::var("TGSI_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok());
    while fixed.map_or(start.elapsed() < budget || rounds < 3, |n| rounds < n) {
        for t in texts {
            run(t);
        }
        rounds += 1;
    }
    let wall = start.elapsed().as_secs_f64();
    let seconds = match (cpu_start, thread_cpu()) {
        (Some(a), Some(b)) if b - a > 0.5 => b - a,
        _ => wall,
    };
    ((bytes * rounds) as f64 / seconds / 1e6, bytes)
}

fn main() {
    if let Ok(line) = std::env::var("TGSI_BENCH_LINE") {
        let count: usize = std::env::var("TGSI_BENCH_COUNT").ok().and_then(|c| c.parse().ok()).unwrap_or(400_000);
        let text = format!("FRAG\n{}", format!("{line}\n").repeat(count));
        let (mbps, bytes) = throughput(&[text], Duration::from_secs(3));
        println!("parse: {line:?} x {count} ({bytes} bytes): {mbps:.0} MB/s");
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read = |dir: &str| {
        let mut files = Vec::new();
        collect_tgsi(&root.join(dir), &mut files);
        files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect::<Vec<String>>()
    };
    // `TGSI_BENCH_DIR` measures another set of shaders (e.g. the ones another parser accepts).
    let samples = match std::env::var("TGSI_BENCH_DIR") {
        Ok(dir) => read(&dir),
        Err(_) => read("tgsi-samples"),
    };
    let mut texts = samples.clone();
    texts.extend(read("tests/tgsi"));
    println!("(MB/s per second of CPU time of the benchmark thread)");
    let (mbps, bytes) = throughput(&samples, Duration::from_secs(3));
    println!("parse: samples ({} files, {} bytes): {mbps:.0} MB/s", samples.len(), bytes);
    let (mbps, _) = throughput_with_check(&samples, Duration::from_secs(3));
    println!("parse + check: samples: {mbps:.0} MB/s");
    let (mbps, bytes) = throughput(&texts, Duration::from_secs(3));
    println!("parse: samples and fixtures ({} files, {} bytes): {mbps:.0} MB/s", texts.len(), bytes);
    if std::env::var_os("TGSI_BENCH_SAMPLES_ONLY").is_some() {
        return;
    }

    let typical = vec![synthetic(3_000)];
    let (mbps, bytes) = throughput(&typical, Duration::from_secs(3));
    println!("parse: synthetic shader of a large game's size ({bytes} bytes, 3002 instructions): {mbps:.0} MB/s");

    let big = vec![synthetic(400_000)];
    let (mbps, bytes) = throughput(&big, Duration::from_secs(5));
    println!("parse: synthetic shader ({bytes} bytes, 400002 instructions): {mbps:.0} MB/s");

    let program = tgsi::parse(&big[0]).unwrap();
    let start = Instant::now();
    let diags = black_box(tgsi::check(&program));
    let check = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let printed = black_box(tgsi::print(&program));
    let print = start.elapsed().as_secs_f64();
    assert_eq!(printed, big[0]);
    println!(
        "check: {:.0} MB/s ({} diagnostics); print: {:.0} MB/s",
        bytes as f64 / check / 1e6,
        diags.len(),
        bytes as f64 / print / 1e6
    );
}
