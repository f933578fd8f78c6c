export declare function cacheSaltId(salt: string): bigint;
