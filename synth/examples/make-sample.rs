//! Writes `sample/sample.pcap` (run from the workspace root):
//! `cargo run -p meerkat-synth --example make-sample`.

fn main() -> std::io::Result<()> {
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample/sample.pcap");
    std::fs::write(&out, meerkat_synth::sample::sample_pcap())?;
    eprintln!("wrote {}", out.display());
    Ok(())
}
