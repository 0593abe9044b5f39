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
        // A DoH record holds two others: boxed, so that the Event's `app` oneof (moved
        // with every record) stays the size of its largest ordinary arm.
        .boxed(".meerkat.events.v1.Event.app.doh2")
        // So is SMB's, by far the largest record (992 bytes against 392 for the next).
        .boxed(".meerkat.events.v1.Event.app.smb")
        // Rare (206 responses): boxed, so that every HTTP record does not grow by it.
        .boxed(".meerkat.events.v1.Http.content_range")
        .compile_fds(fds)?;
    Ok(())
}
