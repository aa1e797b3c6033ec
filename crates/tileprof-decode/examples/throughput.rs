//! One step of the decoder on one file, for timing and instruction counts:
//!
//!     cargo run --release --example throughput -- FILE read|validate|scan|decode|ndjson [THREADS]
//!     valgrind --tool=callgrind target/release/examples/throughput FILE decode 1
//!
//! `validate` is serde_json's validate-only pass (IgnoredAny), the floor the decoder is held to
//! in docs/performance.md; `scan` is the structural scan alone.

use std::time::Instant;

use tileprof_decode::{json, ndjson, pool, scan};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (path, step) = (&args[1], args[2].as_str());
    let threads = args
        .get(3)
        .map_or(1, |n| n.parse().expect("a thread count"));
    let began = Instant::now();
    let data = std::fs::read(path).expect("a readable file");
    let read = began.elapsed().as_secs_f64();
    let began = Instant::now();
    let what = match step {
        "read" => data.len(),
        "validate" => {
            serde_json::from_slice::<serde::de::IgnoredAny>(&data).expect("valid JSON");
            data.len()
        }
        "scan" => data
            .chunks(1 << 20)
            .map(|block| scan::summarise(block).delta[0] as usize)
            .sum(),
        "decode" => {
            let threads = pool(threads).expect("threads");
            json::decode(&data, &threads, &json::Keep, None, &Default::default())
                .expect("a dump")
                .columns
                .len()
        }
        "ndjson" => {
            let threads = pool(threads).expect("threads");
            let (window, keep) = (ndjson::WINDOW_BYTES, &json::Keep);
            ndjson::decode_slice(&data, &threads, window, keep, &Default::default())
                .expect("a dump")
                .columns
                .len()
        }
        other => panic!("no step {other}"),
    };
    let seconds = began.elapsed().as_secs_f64();
    let mb = data.len() as f64 / 1e6;
    println!(
        "{step}: {seconds:.3} s, {:.0} MB/s ({what}; read {read:.3} s)",
        mb / seconds
    );
}
