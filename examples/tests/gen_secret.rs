//! `odeon-node gen-secret`: the README's way to make a cluster secret.

use std::process::Command;

fn gen_secret() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_odeon-node"))
        .arg("gen-secret")
        .output()
        .expect("the odeon-node binary runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).expect("the secret is text")
}

#[test]
fn gen_secret_prints_a_fresh_random_secret_a_node_accepts() {
    let (a, b) = (gen_secret(), gen_secret());
    let secret = a.strip_suffix('\n').expect("one line");
    assert_eq!(secret.len(), 64, "{secret:?}");
    assert!(secret.bytes().all(|c| c.is_ascii_hexdigit()), "{secret:?}");
    assert_ne!(a, b, "every secret is new");
    assert!(odeon_remote::Secret::new(secret).is_ok());
}
