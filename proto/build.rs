//! Compiles the .proto contracts with `protox` (pure Rust, no `protoc` needed) and
//! generates the prost messages and tonic services.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/events.proto",
        "proto/writer.proto",
        "proto/control.proto",
    ];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
