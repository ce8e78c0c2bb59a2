//! scratch
use odeon_mobility_model::*;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("a");
    let cfg = match which {
        "a" => Config {
            nodes: 3,
            clients: vec![
                Client {
                    node: 1,
                    asks: vec![false, true],
                },
                Client {
                    node: 2,
                    asks: vec![false, false],
                },
            ],
            max_moves: 1,
            max_crashes: 0,
            crashable: 0,
            refusers: 0,
            timeouts: false,
            bug: None,
        },
        "b" => Config {
            nodes: 3,
            clients: vec![
                Client {
                    node: 1,
                    asks: vec![false, true],
                },
                Client {
                    node: 2,
                    asks: vec![false, false],
                },
            ],
            max_moves: 2,
            max_crashes: 0,
            crashable: 0,
            refusers: 0,
            timeouts: false,
            bug: None,
        },
        "c" => Config {
            nodes: 3,
            clients: vec![Client {
                node: 1,
                asks: vec![false, true],
            }],
            max_moves: 2,
            max_crashes: 1,
            crashable: 0b111,
            refusers: 0,
            timeouts: true,
            bug: None,
        },
        _ => panic!(),
    };
    let limit: u64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(2_000_000);
    let t = Instant::now();
    let r = exhaustive(&cfg, limit);
    println!(
        "{which}: states {} terminals {} depth {} truncated {} events {:?} in {:?}",
        r.states,
        r.terminals,
        r.max_depth,
        r.truncated,
        Event::ALL
            .iter()
            .filter(|e| e.in_mask(r.events))
            .collect::<Vec<_>>(),
        t.elapsed()
    );
    if let Some(v) = r.violation {
        println!("{}", v.explain());
    }
}
