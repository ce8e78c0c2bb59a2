//! `theater-rings` at a tiny size: the bench starts itself as two child nodes, every
//! ring's token comes back on both kinds, and the children end with it.

use std::process::Command;

#[test]
fn theater_rings_runs_on_three_processes() {
    let out = Command::new(env!("CARGO_BIN_EXE_odeon-mobility-bench"))
        .args([
            "theater-rings",
            "--rings",
            "1,4",
            "--theater-msgs",
            "60",
            "--rounds",
            "1",
        ])
        .output()
        .expect("the bench binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for line in ["1 rings (60 hops each)", "4 rings (15 hops each)"] {
        assert!(stdout.contains(line), "no {line:?} in:\n{stdout}");
    }
    assert_eq!(stdout.matches("mobile ").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("remote-capable ").count(), 2, "{stdout}");
}

#[test]
fn a_child_node_without_its_arguments_fails() {
    let out = Command::new(env!("CARGO_BIN_EXE_odeon-mobility-bench"))
        .args(["theater-node", "--name", "b"])
        .output()
        .expect("the bench binary runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs --name and --seed"));
}
