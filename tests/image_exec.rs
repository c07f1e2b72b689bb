//! Images end to end: the interpreter and the emulator on the image samples.

use tgsi2va::exec::image::data_words;

fn run(path: &str, seed: u64) -> (tgsi2va::interp::Run, tgsi2va::exec::io::Inputs) {
    let text = std::fs::read_to_string(path).unwrap();
    let program = tgsi2va::tgsi::parse(&text).unwrap();
    let inputs = tgsi2va::interp::inputs::generate(&program, seed);
    (tgsi2va::interp::run(&program, &inputs).unwrap(), inputs)
}

#[test]
fn debug_print() {
    for seed in 1..4 {
        let (run, inputs) = run("tgsi-samples/cs/image.tgsi", seed);
        for (unit, words) in &run.outputs.images {
            let initial = data_words(&inputs.images[unit].initial_data());
            let changed = words.iter().zip(&initial).filter(|(a, b)| a != b).count();
            let inexact = run.image_accuracy[unit].iter().filter(|a| **a != tgsi2va::interp::Accuracy::Exact).count();
            println!("seed {seed} image {unit}: {} words, {changed} changed, {inexact} inexact", words.len());
        }
    }
}
