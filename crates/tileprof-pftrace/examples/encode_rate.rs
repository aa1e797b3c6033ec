//! Time the slice encoder apart from compression on synthetic rows shaped like a tile dump's
//! (6 arguments, a metadata list of 0 to 11 entries): `cargo run --release --example
//! encode_rate [ROWS]`.

use std::time::Instant;

use tileprof_pftrace::{batches, Arg, Column, Lists, Slices};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("ROWS is a number"));
    let ramp = |m: i64| (0..n as i64).map(move |i| (i * 7919) % m);
    let track: Vec<i64> = ramp(1472).map(|t| (1 << 24) + t).collect();
    let begin: Vec<i64> = (0..n as i64).map(|i| i * 17_000).collect();
    let end: Vec<i64> = begin.iter().map(|b| b + 12_345).collect();
    let small: Vec<i64> = ramp(400).collect();
    let cycles: Vec<f64> = ramp(50_000).map(|v| v as f64).collect();
    let lists: Vec<Vec<(u64, u64)>> = (0..416u64)
        .map(|l| (0..l % 12).map(|e| (20 + e, 100 + l * 12 + e)).collect())
        .collect();
    let index: Vec<i64> = ramp(416).collect();
    let int = |name_iid, values| Arg {
        name_iid,
        column: Column::full(values),
    };
    let slices = Slices {
        sequence: 1,
        track: &track,
        begin: &begin,
        end: &end,
        name: &small,
        category: Column::full(&small),
        ints: vec![int(1, &small), int(2, &small), int(3, &small)],
        doubles: vec![
            Arg {
                name_iid: 4,
                column: Column::full(&cycles),
            },
            Arg {
                name_iid: 5,
                column: Column::full(&cycles),
            },
        ],
        strings: vec![int(6, &small)],
        lists: Some(Lists {
            entries: &lists,
            index: Column::full(&index),
        }),
    };
    let began = Instant::now();
    let mut plain = Vec::new();
    slices.encode_rows(0, n, &mut plain);
    let encoded = began.elapsed();
    let began = Instant::now();
    let level = std::env::var("LEVEL").map_or(1, |l| l.parse().expect("LEVEL is a number"));
    let packed = batches::compress(&plain, level);
    let compressed = began.elapsed();
    println!(
        "{n} slices: encode {:.3} s ({:.0} ns a slice, {} bytes), zlib level {level} {:.3} s ({} bytes)",
        encoded.as_secs_f64(),
        encoded.as_nanos() as f64 / n as f64,
        plain.len(),
        compressed.as_secs_f64(),
        packed.len()
    );
}
