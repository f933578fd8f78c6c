export declare class CliError extends Error {
    readonly name = "CliError";
}
export declare const EXIT_OK = 0;
export declare const EXIT_FINDINGS = 1;
export declare const EXIT_USAGE = 2;
