fn main() -> std::process::ExitCode {
    freezegate::commands::main()
}
