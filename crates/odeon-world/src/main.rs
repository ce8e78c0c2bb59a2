//! `odeon-world`: run the world as actors or in shared memory and time it.
//!
//! ```text
//! cargo run --release -p odeon-world -- --objects 10000 --ticks 100 --impl actors
//! ```
//! ends with `impl=actors objects=10000 ticks=100 seconds=… ticks_per_s=… checksum=…`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use odeon_world::WorldError;
use odeon_world::actors::ActorWorld;
use odeon_world::png::write_frame;
use odeon_world::rules::{Field, Obj};
use odeon_world::shared::SharedWorld;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Impl {
    Actors,
    Shared,
}

/// A 2-D world of planets, trees and creatures, as actors or in shared memory.
#[derive(Debug, Parser)]
struct Args {
    /// Objects at the start.
    #[arg(long, default_value_t = 10_000)]
    objects: usize,
    /// Ticks to run.
    #[arg(long, default_value_t = 100)]
    ticks: u64,
    /// Implementation.
    #[arg(long = "impl", value_enum, default_value_t = Impl::Actors)]
    implementation: Impl,
    /// Seed of the world.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Workers (actors) or rayon threads (shared); 0: one per core.
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Write a PNG frame to this directory every `--png-every` ticks.
    #[arg(long)]
    png: Option<PathBuf>,
    /// Ticks between frames.
    #[arg(long, default_value_t = 10)]
    png_every: u64,
    /// Pixels per cell in frames.
    #[arg(long, default_value_t = 2)]
    png_scale: usize,
    /// Spread the actor world's regions over this many processes on loopback
    /// (odeon-remote nodes); same checksums as one
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Internal: run as child node N of a `--nodes` world (started by node 0)
    #[arg(long, hide = true)]
    node_child: Option<usize>,
    /// Internal: node 0's address, for `--node-child`
    #[arg(long, hide = true)]
    join: Option<std::net::SocketAddr>,
}

fn progress(tick: u64, of: u64, objects: usize) {
    eprint!("\rtick {tick}/{of} objects={objects}   ");
    let _ = std::io::stderr().flush();
}

fn frame(args: &Args, tick: u64, field: &Field, objs: &[Obj]) -> Result<(), WorldError> {
    match &args.png {
        Some(dir) => write_frame(
            &dir.join(format!("frame-{tick:05}.png")),
            field,
            objs,
            args.png_scale.max(1),
        ),
        None => Ok(()),
    }
}

fn run(args: &Args) -> Result<(f64, u64), WorldError> {
    if let Some(dir) = &args.png {
        std::fs::create_dir_all(dir).map_err(|e| WorldError::Io(dir.clone(), e))?;
    }
    let every = if args.png.is_some() {
        args.png_every.max(1)
    } else {
        0
    };
    match args.implementation {
        Impl::Shared => {
            if args.workers > 0 {
                // Only fails if the global pool was already built, which it is not.
                let _ = rayon::ThreadPoolBuilder::new()
                    .num_threads(args.workers)
                    .build_global();
            }
            let mut world = SharedWorld::new(args.objects, args.seed);
            let start = Instant::now();
            let mut checksum = 0;
            for _ in 0..args.ticks {
                checksum = world.step();
                progress(world.tick(), args.ticks, world.objects().len());
                if every != 0 && world.tick().is_multiple_of(every) {
                    frame(args, world.tick(), world.field(), world.objects())?;
                }
            }
            Ok((start.elapsed().as_secs_f64(), checksum))
        }
        Impl::Actors => {
            let mut world = if args.nodes > 1 {
                let exe = std::env::current_exe()
                    .map_err(|e| WorldError::Nodes(format!("cannot find this binary: {e}")))?;
                ActorWorld::on_nodes(args.objects, args.seed, args.workers, args.nodes, &exe)?
            } else {
                ActorWorld::new(args.objects, args.seed, args.workers)?
            };
            let field = world.field().clone();
            let start = Instant::now();
            let mut failed = None;
            let reports = world.run(args.ticks, every, |r| {
                progress(r.tick, args.ticks, r.objects);
                if let Some(objs) = &r.frame
                    && let Err(e) = frame(args, r.tick, &field, objs)
                {
                    failed.get_or_insert(e);
                }
            })?;
            let seconds = start.elapsed().as_secs_f64();
            world.shutdown();
            if let Some(e) = failed {
                return Err(e);
            }
            Ok((seconds, reports.last().map_or(0, |r| r.checksum)))
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(index) = args.node_child {
        let Some(join) = args.join else {
            eprintln!("error: --node-child needs --join");
            return ExitCode::FAILURE;
        };
        return match odeon_world::actors::nodes::serve(index, args.nodes, join, args.workers) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: node {index}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match run(&args) {
        Ok((seconds, checksum)) => {
            eprintln!();
            let name = match args.implementation {
                Impl::Actors => "actors",
                Impl::Shared => "shared",
            };
            println!(
                "impl={name} objects={} ticks={} seconds={seconds:.3} ticks_per_s={:.1} checksum={checksum:016x}",
                args.objects,
                args.ticks,
                args.ticks as f64 / seconds.max(1e-9)
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("\nerror: {e}");
            ExitCode::FAILURE
        }
    }
}
